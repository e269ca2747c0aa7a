/* profile.h - where the live memory of N snapshots was allocated: per stack and per group
 * key, the bytes, blocks and requested bytes of every side.
 *
 * The one per-stack analysis. The diff (diff.h) compares its keys between two sides;
 * renderers consume it directly: folded stacks for flame graphs today, pprof, series over
 * N snapshots, summaries and the HTML report next.
 *
 * A side is one snapshot; a side may be absent (NULL: an empty baseline), and then holds
 * no stacks and zero figures. Only ALLOCATED blocks count (see attrib.h for the keys).
 *
 *   - Stacks are the snapshot's own interned stacks, so stack ids are per side: side 0's
 *     stack 7 and side 1's stack 7 are unrelated. Each stack of each side has its figures
 *     and the index of its key (or SD_PROFILE_NO_KEY: no live block, or dropped by a focus
 *     pattern).
 *   - Keys are strings, shared by all sides: a key's figures are the sums over the stacks
 *     of each side that map to it. With a focus pattern the keys hold only the focused
 *     blocks, while the stacks' figures still count every live block.
 *
 * A profile borrows its snapshots: free the profile before them.
 */
#ifndef SNAPDIFF_PROFILE_H
#define SNAPDIFF_PROFILE_H

#include "attrib.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sd_profile sd_profile;

typedef struct sd_profile_figures {
    uint64_t bytes;          /* sizes of the ALLOCATED blocks */
    uint64_t blocks;         /* how many */
    uint64_t requested;      /* their requested sizes (what the program asked for) */
} sd_profile_figures;

#define SD_PROFILE_NO_KEY UINT32_MAX

typedef struct sd_profile_key {
    const char *key;                    /* the group key (attrib.h) */
    const sd_profile_figures *sides;    /* [side count] */
    /* The representative stack: the one with the most bytes in the last side where the
     * key has any (ties: the lowest stack id). None when every block is empty. */
    bool has_rep;
    size_t rep_side;
    uint32_t rep_stack;                 /* a stack id of side rep_side */
    sd_site rep_site;                   /* its site and via */
    /* Grew at every step: its bytes never fell from one side to the next, and the last
     * side holds more than the first (the report's series marks such a group). */
    bool grew_every_side;
} sd_profile_key;

#define SD_PROFILE_OPTIONS_VERSION 1
typedef struct sd_profile_options {
    unsigned version;   /* SD_PROFILE_OPTIONS_VERSION (growable: common.h) */
    sd_attrib_options attrib;           /* what a key is: group by, depth, patterns */
    uint64_t max_memory;                /* budget for the profile's tables; 0 = unlimited */
} sd_profile_options;
#define SD_PROFILE_OPTIONS_INIT {SD_PROFILE_OPTIONS_VERSION, SD_ATTRIB_OPTIONS_INIT, 0}
sd_status sd_profile_options_init(sd_profile_options *opts, unsigned version);

/* Profile snaps[0..n_sides) (n_sides >= 1; entries may be NULL, at least one not).
 * @return the profile, or NULL with err filled (SD_EUSAGE: bad pattern or arguments,
 * SD_ENOMEM, SD_ELIMIT: more than 4 billion keys). */
sd_profile *sd_profile_create(const sd_snapshot *const *snaps, size_t n_sides,
                              const sd_profile_options *opts, sd_error *err);
void sd_profile_free(sd_profile *p);

size_t sd_profile_side_count(const sd_profile *p);
const sd_snapshot *sd_profile_snapshot(const sd_profile *p, size_t side);  /* NULL: absent */
const sd_attrib *sd_profile_attrib(const sd_profile *p);

/* Stacks of one side, by the snapshot's stack id (0 when the side is absent). */
size_t sd_profile_stack_count(const sd_profile *p, size_t side);
const sd_profile_figures *sd_profile_stack(const sd_profile *p, size_t side, uint32_t stack);
uint32_t sd_profile_stack_key(const sd_profile *p, size_t side, uint32_t stack);

/* Keys in the order they were first met (side 0's stacks by id, then side 1's, ...). */
size_t sd_profile_key_count(const sd_profile *p);
const sd_profile_key *sd_profile_key_at(const sd_profile *p, size_t i);
/* The sums over all keys, per side. */
const sd_profile_figures *sd_profile_total(const sd_profile *p, size_t side);

/* ---- merged stacks: what the stack outputs draw ----
 * The stacks of side `to` minus side `from` (a side without a snapshot adds nothing: with
 * `from` absent, every live stack of `to`), merged by the text an output writes for a
 * stack, since the outputs drop frames (native noise) and so collapse different interned
 * stacks into one. Only stacks whose bytes grew are kept, sorted by key; stacks dropped by
 * a focus pattern are left out. The key of a stack, by form:
 *   SD_STACKS_FOLDED  "outer;...;inner", a frame "NAME (PATH:LINE)" with PATH labelled as
 *                     every view labels it, an autograd node or ATen op by its name, a
 *                     backward stack after its forward one and "[backward]" (render_diff.h:
 *                     the folded output; the report's icicle);
 *   SD_STACKS_FRAMES  the frames innermost first, each "FILE\x1fLINE\x1fNAME\x1e" with
 *                     the whole FILE (the pprof output).
 * The result borrows the profile: free it first. max_memory bounds its tables (0 =
 * unlimited). @return the stacks, or NULL with err (SD_ENOMEM, SD_EUSAGE). */
typedef enum sd_stacks_form { SD_STACKS_FOLDED, SD_STACKS_FRAMES } sd_stacks_form;
typedef struct sd_stacks sd_stacks;
sd_stacks *sd_stacks_create(const sd_profile *p, size_t from, size_t to, sd_stacks_form form,
                            uint64_t max_memory, sd_error *err);
void sd_stacks_free(sd_stacks *s);
sd_stacks_form sd_stacks_form_of(const sd_stacks *s);
bool sd_stacks_growth(const sd_stacks *s);        /* true: a `from` snapshot was subtracted */
size_t sd_stacks_count(const sd_stacks *s);
const char *sd_stacks_key(const sd_stacks *s, size_t i, size_t *len);   /* NUL-terminated */
int64_t sd_stacks_bytes(const sd_stacks *s, size_t i);    /* to minus from */
int64_t sd_stacks_blocks(const sd_stacks *s, size_t i);

#ifdef __cplusplus
}
#endif

#endif
