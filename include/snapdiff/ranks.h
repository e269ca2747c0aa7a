/* ranks.h - many ranks at once: an archive or a directory holding one snapshot per rank.
 *
 * Pairing the members of an OLD and a NEW input (by rank number when the names carry one,
 * else by name; a member on one side only is kept as a pair with a missing side, never
 * dropped), and the spread of a set of snapshots (min, median, max of allocated and
 * reserved, and the rank furthest from the median). Names only, no I/O.
 */
#ifndef SNAPDIFF_RANKS_H
#define SNAPDIFF_RANKS_H

#include <stdbool.h>
#include "snapshot.h"
#include "stats.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SD_RANK_NONE SIZE_MAX

/* Whether both sides of a pair of members are there. */
typedef enum sd_member_missing {
    SD_MEMBER_PAIRED,         /* both sides */
    SD_MEMBER_NO_OLD,         /* only in NEW (nothing to compare with) */
    SD_MEMBER_NO_NEW,         /* only in OLD (the rank is gone) */
} sd_member_missing;

/* ---- the snapshot folders that training jobs write ----
 * What a file's path says when a framework wrote it (the one rule; sd_rank_of_name and
 * sd_ranks_names_are_ranks use it too):
 *   torchtitan       memory_snapshot/iteration_N/rankR_memory_snapshot.pickle, and
 *                    iteration_N_exit/ at an OOM (tools/profiling.py,
 *                    maybe_enable_memory_snapshot)
 *   Megatron-LM      oom_rank-R_<memory_snapshot_path> (the OOM observer of
 *                    pretrain_gpt.py's model_provider)
 *   Megatron-Bridge  <stem>_R.pickle, <stem>_rank-R.pickle, <stem>_oom_rank-R.pickle
 *                    (the stem ends in "snapshot": memory_snapshot_path's default)
 *   verl             stepS/torch_memory_rankR_pidP.pickle (S also bare digits), and
 *                    torch_memory_oom_rankR_pidP.pickle at an OOM (its torch_memory profiler)
 *   a pattern        --name-pattern: a regular expression whose groups are named
 *                    (?P<rank>...) and (?P<step>...), matched against the whole path */
typedef enum sd_job_layout {
    SD_JOB_NONE,
    SD_JOB_TORCHTITAN,
    SD_JOB_MEGATRON_LM,
    SD_JOB_MEGATRON_BRIDGE,
    SD_JOB_VERL,
    SD_JOB_PATTERN,
} sd_job_layout;

typedef struct sd_job_name {
    sd_job_layout layout;
    int64_t rank;       /* -1: the name does not say */
    int64_t step;       /* -1: the name does not say */
    bool oom;           /* an OOM dump (taken when the allocator failed), not a step's */
} sd_job_name;

typedef struct sd_name_pattern sd_name_pattern;

/* "torchtitan", "Megatron-LM", "Megatron-Bridge", "verl", "--name-pattern", or NULL. */
const char *sd_job_layout_name(sd_job_layout layout);

typedef struct sd_rank_pair {
    size_t old_index;       /* into the OLD names, or SD_RANK_NONE: missing in OLD */
    size_t new_index;       /* into the NEW names, or SD_RANK_NONE: missing in NEW */
    int64_t rank;           /* the rank both names carry, -1 when paired by name */
} sd_rank_pair;

/* Pair OLD's members with NEW's. By rank number when every name on both sides carries a
 * distinct one; else by equal names. One OLD member against several NEW ones is the
 * baseline of each. Order: NEW's members in order, then those only in OLD.
 * `pairs` has room for n_old + n_new. @return the number of pairs. */
size_t sd_ranks_pair(const char *const *old_names, size_t n_old, const char *const *new_names,
                     size_t n_new, sd_rank_pair *pairs);

/* ---- a job's folder: its snapshots by step and rank ---- */

typedef struct sd_job_entry {
    const char *source;     /* the snapshot's name (borrowed) */
    sd_job_name name;       /* as sd_job_name_read read it */
    sd_stats total;         /* over every device (allocated_bytes, reserved_bytes) */
} sd_job_entry;

/* Per rank across the steps: its first and last step's allocated bytes (OOM dumps left
 * out: they are the moment the allocator failed, not a step's end state). */
typedef struct sd_job_rank {
    int64_t rank;           /* -1: the names carry none */
    size_t n_steps;         /* snapshots of steps (not OOM dumps) */
    size_t n_oom;           /* its OOM dumps */
    int64_t first_step, last_step;             /* -1 when n_steps == 0 */
    uint64_t first_allocated, last_allocated;
    int64_t change;         /* last - first allocated; 0 with fewer than 2 steps */
} sd_job_rank;

/* How snapshots are to be read: as their names say, or as the user said (--as-ranks,
 * --as-series). */
typedef enum sd_read_as { SD_READ_AS_GUESS, SD_READ_AS_RANKS, SD_READ_AS_SERIES } sd_read_as;
typedef enum sd_names_view {
    SD_NAMES_SERIES,    /* a time series, in the order given */
    SD_NAMES_RANKS,     /* the ranks of one job, side by side */
    SD_NAMES_JOB,       /* a job's folder, by step and rank */
} sd_names_view;

typedef struct sd_rank_spread {
    size_t n;
    uint64_t allocated_min, allocated_median, allocated_max;   /* lower median */
    uint64_t reserved_min, reserved_median, reserved_max;
    size_t furthest;              /* the snapshot furthest from the median allocated (SD_RANK_NONE
                                   * when every rank allocates the same: no outlier)
                                   * (the first of equals); SD_RANK_NONE when n == 0 */
    int64_t furthest_delta;       /* its allocated - the median */
} sd_rank_spread;

/* Totals over every device of each snapshot. Never fails. */
void sd_rank_spread_of(const sd_snapshot *const *snaps, size_t n, sd_rank_spread *out);
/* The same from each snapshot's totals (sd_stats_total), for callers that keep those and
 * free the snapshots. */
void sd_rank_spread_of_totals(const sd_stats *totals, size_t n, sd_rank_spread *out);

/* ---- Experimental (docs/architecture.md, "Tiers"): declared only where the includer
 * defines SNAPDIFF_EXPERIMENTAL; exported in the node LIBSNAPDIFF_EXPERIMENTAL_0.3, with no
 * API or ABI promise (they may change in any release). */
#ifdef SNAPDIFF_EXPERIMENTAL
/* The rank number a member name carries: as a job's folder names it (sd_job_name_read),
 * else the digits after the last "rank" (any case), with an optional '_', '-' or '.'
 * between ("rank3.pickle", "job_rank_12.pkl", "rank0/snapshot.pickle"). @return -1 when
 * none. */
int64_t sd_rank_of_name(const char *name);
/* Compile --name-pattern (POSIX extended; groups (?P<rank>...) and (?P<step>...), at least
 * one of them; (?P<oom>...) marks an OOM dump when it matches). @return NULL with err
 * filled (SD_EUSAGE) when it is no such expression. */
sd_name_pattern *sd_name_pattern_create(const char *regex, sd_error *err);
void sd_name_pattern_free(sd_name_pattern *p);
/* Read `name` (a path as sd_input_name gives it) by `pattern` when given and it matches,
 * else by the frameworks' layouts above. @return false (out->layout SD_JOB_NONE, rank and
 * step -1) when none applies. */
bool sd_job_name_read(const char *name, const sd_name_pattern *pattern, sd_job_name *out);
/* Whether n >= 2 names are the ranks of one job: every name carries a rank number, no two
 * the same, and the names are equal once that number is taken out ("rank0.pickle",
 * "rank1.pickle"; "job.zip:rank3/step200.pickle"). Names that differ otherwise
 * ("step100_rank0", "step200_rank0") are a series. */
bool sd_ranks_names_are_ranks(const char *const *names, size_t n);
/* Whether n names are a job's folder to be read by step and rank: every one reads
 * (sd_job_name_read), and they hold two or more steps or an OOM dump. (One step of
 * several ranks is sd_ranks_names_are_ranks.) */
bool sd_job_names_are_steps(const char *const *names, size_t n, const sd_name_pattern *pattern);
/* The one rule by which every command reads a folder (or the snapshots given) as ranks:
 * `as` RANKS or SERIES as said; else a job's folder when n >= 2 names hold steps
 * (sd_job_names_are_steps) or `pattern` reads every one of them; else the ranks of one
 * job when sd_ranks_names_are_ranks; else a series. */
sd_names_view sd_names_view_of(const char *const *names, size_t n, sd_read_as as,
                               const sd_name_pattern *pattern);
/* Order e[0..n) by step, then rank, the OOM dumps of a step after its snapshots; fill
 * ranks (room for n) by rank number. *grown: the index into ranks of the rank whose
 * allocated grew most between its first and last step, SD_RANK_NONE when none grew.
 * @return the number of ranks. */
size_t sd_job_summarize(sd_job_entry *e, size_t n, sd_job_rank *ranks, size_t *grown);
#endif /* SNAPDIFF_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif

#endif
