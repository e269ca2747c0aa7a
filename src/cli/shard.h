/* shard.h - `summarize --shard`: the inputs of a map task on a cluster.
 *
 * A scheduler starts N tasks over the same list of inputs; each must take its own share
 * without talking to the others. The list (the arguments, @FILE lists expanded) is sorted
 * byte-wise, so every task sees the same order whatever order it was given in, and task I
 * takes the contiguous run [I*n/N, (I+1)*n/N). The task's I and N come from --shard I/N,
 * or from the scheduler's environment (--shard auto): docs/cluster.md.
 */
#ifndef SNAPDIFF_CLI_SHARD_H
#define SNAPDIFF_CLI_SHARD_H

#include <stdbool.h>
#include <stddef.h>

/* The most tasks a share can be split into (a count beyond it is a typo). */
#define CLI_SHARD_MAX 10000000ul

struct cli_share {
    unsigned long index, count;   /* 0 <= index < count */
    char how[256];                /* where they came from, for the one note line */
};

/* Whether `spec` is I/N, auto or auto/N (I < N <= CLI_SHARD_MAX). Reads no environment:
 * for the option parser, so that a typo fails before anything runs. */
bool cli_share_syntax_ok(const char *spec);

/* The share of this task: from I/N as given, or for auto from the first scheduler whose
 * variables are set: Slurm (SLURM_ARRAY_TASK_ID, _COUNT, _MIN, _STEP), a Kubernetes
 * Indexed Job (JOB_COMPLETION_INDEX; the count from auto/N), torchrun (RANK, WORLD_SIZE).
 * An N in auto/N must agree with the scheduler's own count.
 * @return true, or false with one line for the user in errbuf. */
bool cli_share_resolve(const char *spec, struct cli_share *out, char *errbuf, size_t errlen);

/* [*first, *end): the share's run of n sorted inputs. */
void cli_share_range(size_t n, const struct cli_share *s, size_t *first, size_t *end);

/* The inputs: each argument, or for "@FILE" the lines of FILE (one path a line, relative to
 * the working directory; empty lines and lines starting with '#' are left out), sorted
 * byte-wise. *out is one malloc'd array of malloc'd strings (cli_inputs_free).
 * @return true, or false with one line for the user in errbuf. */
bool cli_inputs_expand(const char *const *args, size_t n, char ***out, size_t *n_out,
                       char *errbuf, size_t errlen);
void cli_inputs_free(char **list, size_t n);

/* A string that list[0..n) holds twice (borrowed from list), or NULL; *oom when memory
 * for the sorted copy ran out. */
const char *cli_first_duplicate(char *const *list, size_t n, bool *oom);

/* DIR/NAME.sdsum for an input: NAME is its file name without the folders
 * ("/data/job7/rank0003.pickle" -> "rank0003.pickle"), a member of an archive appended
 * ("ranks.zip:r/3.pickle" -> "ranks.zip_r_3.pickle"); a leading '.' becomes '_' so that
 * the summary is never a hidden file (which a directory load would leave out).
 * @return false when the input names no file (empty, "-", a folder's trailing '/'). */
bool cli_summary_path(const char *dir, const char *input, char *out, size_t size);

#endif
