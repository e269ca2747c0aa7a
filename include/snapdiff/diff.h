/* diff.h - what grew between two snapshots, grouped by where it was allocated.
 *
 * Attribution: each live block (state ALLOCATED) is charged to a group key computed from
 * its allocation stack (innermost frame first). The default key is the allocation *site*:
 * the first frame, walking outwards, that is the user's own Python code - not native
 * (C++, "??"), not generated ("<frozen ...>", "<string>"), not torch, not Python's own
 * library, not a third-party package. The innermost library Python frame below the site
 * (outside torch when there is one) is kept as `via`, so growth inside a library still
 * names the library. Definitions in
 * docs/json-diff.md; tests/truth_diff.py computes the same figures in Python.
 *
 * A diff borrows both snapshots: free the diff before them. Every group's figures sum
 * over ALLOCATED blocks only, so the group deltas add up to the allocated delta (unless a
 * focus filter drops blocks).
 */
#ifndef SNAPDIFF_DIFF_H
#define SNAPDIFF_DIFF_H

#include <stdbool.h>
#include "snapshot.h"
#include "stats.h"

/* ---- Attribution --------------------------------------------------------------------- */

typedef enum sd_group_by {
    SD_GROUP_SITE,       /* "FILE:LINE NAME" of the site (+ --depth user callers) */
    SD_GROUP_LEAF,       /* "FILE:LINE NAME" of the innermost frame, as written */
    SD_GROUP_STACK,      /* every frame but PyTorch's noise, "FILE:LINE NAME;..." inner first */
    SD_GROUP_FILE,       /* FILE of the site */
    SD_GROUP_FUNCTION,   /* "FILE NAME" of the site */
} sd_group_by;

typedef enum sd_frame_kind {
    SD_FRAME_USER,          /* the user's code, or a frame matched by a show pattern */
    SD_FRAME_NATIVE,        /* "??", "", C++ or any source that is not .py */
    SD_FRAME_GENERATED,     /* "<frozen runpy>", "<string>", ... */
    SD_FRAME_TORCH,         /* inside a torch/ package directory */
    SD_FRAME_STDLIB,        /* Python's own library */
    SD_FRAME_THIRD_PARTY,   /* site-packages / dist-packages */
    SD_FRAME_HIDDEN,        /* matched a hide pattern */
} sd_frame_kind;

/* The key of a block without any frame. */
#define SD_NO_STACK "<no stack>"

typedef struct sd_attrib_options {
    sd_group_by group_by;
    int depth;                      /* site keys: append this many user caller frames */
    /* POSIX extended regexes, matched against "FILENAME:LINE NAME" of a frame. */
    const char *const *hide; size_t n_hide;    /* frames to treat as internal */
    const char *const *show; size_t n_show;    /* frames to treat as user code (hide wins) */
    const char *const *focus; size_t n_focus;  /* keep only blocks with a matching frame */
} sd_attrib_options;

typedef struct sd_attrib sd_attrib;

/* Compile the patterns. @return the rules, or NULL with err (SD_EUSAGE names the bad
 * pattern, SD_ENOMEM). The pattern strings are copied. */
sd_attrib *sd_attrib_create(const sd_attrib_options *opts, sd_error *err);
void sd_attrib_free(sd_attrib *a);

/* What kind of code a frame is (hide and show patterns applied first). */
sd_frame_kind sd_attrib_classify(const sd_attrib *a, const sd_frame *f);
/* Does any focus pattern match the frame? (false when there are none) */
bool sd_attrib_frame_focused(const sd_attrib *a, const sd_frame *f);
const char *sd_frame_kind_name(sd_frame_kind k);
/* PyTorch's own noise filter (_memory_viz.py): unwinder, interpreter, dispatcher frames. */
bool sd_frame_is_noise(const sd_frame *f);
/* The part of a library path people recognise, for display only: after site-packages/
 * or dist-packages/, from torch/ on, after lib/pythonX.Y/. Else the path itself. Points
 * into `filename`. */
const char *sd_frame_short_path(const char *filename);

typedef struct sd_site {
    int32_t site;     /* index of the site frame; -1 for an empty stack */
    int32_t via;      /* innermost library .py frame below the site, non-torch first */
    bool is_user;     /* false when no frame is user code and a fallback was taken */
} sd_site;

/* Find the site of frames[0..n) (innermost first). When no frame is user code: the first
 * .py frame outside torch, else the innermost .py frame, else the innermost frame that is
 * not PyTorch noise, else the innermost frame. */
void sd_attrib_site(const sd_attrib *a, const sd_frame *const *frames, size_t n,
                    sd_site *out);
/* Write the group key of the stack into buf (always NUL-terminated when size > 0).
 * @return the key's length, as snprintf does: a result >= size means it was cut. */
size_t sd_attrib_key(const sd_attrib *a, const sd_frame *const *frames, size_t n,
                     char *buf, size_t size);

/* ---- The diff ------------------------------------------------------------------------ */

typedef struct sd_diff sd_diff;

typedef struct sd_diff_options {
    sd_attrib_options attrib;
    uint64_t steps;           /* steps between the snapshots; 0 = unknown */
    uint64_t capacity;        /* bytes per device; 0 = estimate from `oom` entries if any */
    uint64_t max_memory;      /* budget for the diff's own tables; 0 = unlimited */
} sd_diff_options;

typedef enum sd_capacity_source {
    SD_CAPACITY_NONE,         /* unknown: no steps to capacity */
    SD_CAPACITY_GIVEN,        /* from the options */
    SD_CAPACITY_OOM,          /* estimate: last oom entry's device_free + reserved */
} sd_capacity_source;

typedef struct sd_diff_counts {
    uint64_t kept;            /* ALLOCATED in both: same device, address, size and stack */
    uint64_t added;           /* ALLOCATED in new only */
    uint64_t freed;           /* ALLOCATED in old only */
} sd_diff_counts;

typedef struct sd_diff_device {
    int64_t device;
    bool in_old, in_new;
    sd_stats old_stats, new_stats;      /* zeros on the side that lacks the device */
    sd_diff_counts blocks;
    uint64_t capacity;
    sd_capacity_source capacity_source;
    bool has_steps_to_capacity;         /* steps given, growth > 0, capacity known */
    uint64_t steps_to_capacity;         /* ceil((capacity - allocated) / per_step) */
    int64_t per_step;                   /* allocated delta / steps, toward zero */
} sd_diff_device;

typedef struct sd_diff_totals {
    sd_stats old_stats, new_stats;      /* over all devices */
    sd_diff_counts blocks;
    bool has_per_step;
    int64_t per_step;                   /* allocated delta / steps, toward zero */
    double per_step_exact;
    bool has_steps_to_capacity;
    uint64_t steps_to_capacity;         /* the first device to reach its capacity */
    /* Group sums (differ from the allocated figures only under a focus filter). */
    uint64_t group_old_bytes, group_new_bytes;
} sd_diff_totals;

typedef struct sd_diff_group {
    const char *key;
    uint64_t old_bytes, old_blocks, new_bytes, new_blocks;
    int64_t delta_bytes, delta_blocks;
    /* The stack with the most bytes in the new snapshot (old when none there). */
    const sd_snapshot *rep_snapshot;
    uint32_t rep_stack;
    sd_site rep_site;                   /* site and via indices in that stack */
} sd_diff_group;

typedef struct sd_folded_line {
    const char *stack;                  /* "outer;...;inner", frames "name (file:line)" */
    uint64_t bytes;
} sd_folded_line;

/* Compare old (may be NULL: an empty baseline) with new. Both must outlive the diff.
 * @return the diff, or NULL with err filled (bad pattern, memory). */
sd_diff *sd_diff_create(const sd_snapshot *old_snap, const sd_snapshot *new_snap,
                        const sd_diff_options *opts, sd_error *err);
void sd_diff_free(sd_diff *d);

const sd_diff_totals *sd_diff_totals_of(const sd_diff *d);
size_t sd_diff_device_count(const sd_diff *d);          /* union of both, by ordinal */
const sd_diff_device *sd_diff_device_at(const sd_diff *d, size_t i);

/* Groups in report order: growth (largest first), shrinking (most negative first), then
 * unchanged (largest first); ties by key. */
size_t sd_diff_group_count(const sd_diff *d);
size_t sd_diff_growth_count(const sd_diff *d);
size_t sd_diff_shrink_count(const sd_diff *d);
const sd_diff_group *sd_diff_group_at(const sd_diff *d, size_t i);

/* Collapsed stacks for flame graphs: with no old snapshot, the live bytes per stack;
 * otherwise the positive growth per stack. Noise frames are left out, outermost frame
 * first, sorted by stack text. Computed on the first call. @return SD_OK or SD_ENOMEM. */
sd_status sd_diff_folded(sd_diff *d, const sd_folded_line **lines, size_t *n,
                         sd_error *err);

const sd_attrib *sd_diff_attrib(const sd_diff *d);

#endif
