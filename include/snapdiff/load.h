/* load.h - load N inputs at once: one thread per snapshot, as many as `jobs`, within the
 * memory budget. Every command that reads snapshots loads through here.
 *
 * Each input is opened (source.h) to learn its members (an archive or directory of ranks
 * holds several), then every member is built (snapshot.h) independently, so the members
 * of one archive load in parallel as well as separate files; results come back per input
 * and member, in the order given, whatever order the threads finished in. Nothing is
 * printed: the caller reports errors and warnings from the results (first error first,
 * if it stops there).
 *
 * Memory: each snapshot keeps its own budget (max_memory, as sd_load_options). On top,
 * a member only starts loading while the estimated peak of the loads in flight (three
 * times its share of its file's size) stays within max_memory, so N large files do not
 * multiply the budget by N; one load always proceeds, however large.
 */
#ifndef SNAPDIFF_LOAD_H
#define SNAPDIFF_LOAD_H

#include <stdbool.h>
#include "snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SD_LOADER_OPTIONS_VERSION 1
typedef struct sd_loader_options {
    unsigned version;   /* SD_LOADER_OPTIONS_VERSION (growable: common.h) */
    uint64_t max_memory;    /* per snapshot, and the bound on loads in flight; 0 = none */
    unsigned jobs;          /* snapshots loaded at once; 0 = the number of online cores */
    bool all_members;       /* load every member of an archive or directory; when false,
                             * an input must hold exactly one snapshot */
    /* Optional: called in the loading thread with each snapshot as soon as it is built
     * (input index, member index), e.g. to reduce it to a group table (groups.h); the
     * loader then frees it instead of keeping it, so N inputs never hold N models at
     * once. Calls run in parallel, for the members of one input too, in no set order
     * (each member once). A status other than SD_OK fails that input with it (err
     * filled), as the first member that failed.
     * (The return type stands on its own line: tests/lib/check_symbols.sh takes any sd_ name
     * followed by a parenthesis for a function the library must export.) */
    sd_status
    (*each)(void *ctx, size_t input, size_t member, const sd_snapshot *snap, sd_error *err);
    /* Optional: called in the calling thread once per input that opened, before any of
     * the inputs' members loads, for callers that plan from the member names (pairing
     * ranks) before the snapshots arrive. A status other than SD_OK fails that input. */
    sd_status
    (*opened)(void *ctx, size_t input, const sd_input *in, sd_error *err);
    void *ctx;
    bool skip_summaries;    /* as sd_input_options: a directory's summaries left out */
    /* A snapshot of a directory that does not read (truncated, malformed, no snapshot,
     * unreadable: SD_EIO, SD_ETRUNC, SD_EFORMAT, SD_EREFUSED, SD_ESNAPSHOT) is left out
     * and its error kept in sd_loaded.unreadable, instead of failing its input: a job
     * killed while it dumped leaves one such rank file. Never a lack of memory. */
    bool skip_unreadable;
    /* Optional, per input: the input is a file the caller took from a directory itself
     * (as a directory's member, skip_unreadable applies to it). */
    const bool *in_folder;
} sd_loader_options;
#define SD_LOADER_OPTIONS_INIT \
    {SD_LOADER_OPTIONS_VERSION, 0, 0, false, NULL, NULL, NULL, false, false, \
     NULL}
sd_status sd_loader_options_init(sd_loader_options *opts, unsigned version);

typedef struct sd_loaded {
    const char *spec;             /* the input as given (borrowed) */
    sd_status status;             /* SD_OK when every wanted snapshot loaded */
    sd_error err;                 /* why not (unless `ambiguous`) */
    bool ambiguous;               /* !all_members and the input holds n_members != 1 */
    size_t n_members;             /* members of the opened input; 0 if it did not open */
    char *first_member;           /* display name of member 0 (owned; NULL when none) */
    sd_snapshot **snaps;          /* the snapshots loaded, in member order: all of them,
                                   * or those before the member that failed (none with
                                   * `each`) */
    size_t n_snaps;
    size_t n_passed;              /* with `each`: the snapshots handed to it */
    size_t n_skipped;             /* directory files left out as no snapshot (source.h) */
    char *skipped;                /* their names as sd_input_skipped gives them (owned;
                                   * NULL when none) */
    sd_error *unreadable;         /* skip_unreadable: why each member left out did not
                                   * read, in member order (owned; NULL when none) */
    size_t n_unreadable;
} sd_loaded;

/* The default for `jobs`: the number of online cores (at least 1). */
unsigned sd_loader_default_jobs(void);

/* Load specs[0..n) into out[0..n). @return SD_OK when every input loaded, else the
 * status of the first input (in order) that did not; out[] says what happened to each. */
sd_status sd_load_all(const char *const *specs, size_t n, const sd_loader_options *opts,
                      sd_loaded *out);

/* Free the snapshots still in out[i].snaps (a caller keeps one by setting its entry to
 * NULL), the arrays and the names. */
void sd_loaded_free(sd_loaded *out, size_t n);

#ifdef __cplusplus
}
#endif

#endif
