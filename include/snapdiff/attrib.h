/* attrib.h - which frame of an allocation stack names the culprit, and the group keys.
 *
 * Attribution: each live block (state ALLOCATED) is charged to a group key computed from
 * its allocation stack (innermost frame first). The default key is the allocation *site*:
 * the first frame, walking outwards, that is the user's own Python code - not native
 * (C++, "??"), not generated ("<frozen ...>", "<string>"), not torch, not Python's own
 * library, not a third-party package. The innermost library Python frame below the site
 * (outside torch when there is one) is kept as `via`, so growth inside a library still
 * names the library. Definitions in docs/json-diff.md; tests/truth/truth_diff.py computes the
 * same figures in Python. Used by the profile (profile.h) and the diff (diff.h).
 */
#ifndef SNAPDIFF_ATTRIB_H
#define SNAPDIFF_ATTRIB_H

#include <stdbool.h>
#include "snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sd_group_by {
    SD_GROUP_SITE,       /* "FILE:LINE NAME" of the site (+ --depth user callers) */
    SD_GROUP_LEAF,       /* "FILE:LINE NAME" of the innermost frame that is not native noise */
    SD_GROUP_STACK,      /* every frame but native noise, "FILE:LINE NAME;..." inner first */
    SD_GROUP_FILE,       /* FILE of the site */
    SD_GROUP_FUNCTION,   /* "FILE NAME" of the site */
    SD_GROUP_ANNOTATION, /* the stack's user_metadata (newer torch), or "<no annotation>" */
    SD_GROUP_COMPILE_CONTEXT, /* its compile_context, or "<no compile context>" */
    SD_GROUP_BY_COUNT
} sd_group_by;

/* The one table of group-by names ("site", "leaf", "stack", "file", "function",
 * "annotation", "compile-context"), in enum
 * order: options, help and every renderer take them from here. NULL when out of range. */
const char *sd_group_by_name(sd_group_by by);
/* The key named `name`. @return false when no key has that name. */
bool sd_group_by_parse(const char *name, sd_group_by *out);

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
/* The annotation and compile-context keys of a block that recorded none. */
#define SD_NO_ANNOTATION "<no annotation>"
#define SD_NO_COMPILE_CONTEXT "<no compile context>"

#define SD_ATTRIB_OPTIONS_VERSION 1
typedef struct sd_attrib_options {
    unsigned version;   /* SD_ATTRIB_OPTIONS_VERSION (growable: common.h) */
    sd_group_by group_by;
    int depth;                      /* site keys: append this many user caller frames */
    /* POSIX extended regexes, matched against "FILENAME:LINE NAME" of a frame. */
    const char *const *hide; size_t n_hide;    /* frames to treat as internal */
    const char *const *show; size_t n_show;    /* frames to treat as user code (hide wins) */
    const char *const *focus; size_t n_focus;  /* keep only blocks with a matching frame */
} sd_attrib_options;
#define SD_ATTRIB_OPTIONS_INIT \
    {SD_ATTRIB_OPTIONS_VERSION, SD_GROUP_SITE, 0, NULL, 0, NULL, 0, NULL, 0}
sd_status sd_attrib_options_init(sd_attrib_options *opts, unsigned version);

typedef struct sd_attrib sd_attrib;

/* Compile the patterns. @return the rules, or NULL with err (SD_EUSAGE names the bad
 * pattern, SD_ENOMEM). The pattern strings are copied. */
sd_attrib *sd_attrib_create(const sd_attrib_options *opts, sd_error *err);
void sd_attrib_free(sd_attrib *a);

const char *sd_frame_kind_name(sd_frame_kind k);
/* What the rules were made with. */
sd_group_by sd_attrib_group_by(const sd_attrib *a);
int sd_attrib_depth(const sd_attrib *a);
bool sd_attrib_has_focus(const sd_attrib *a);       /* any focus pattern given */

/* How the site frame names the memory. A stack with no Python frame (the autograd
 * engine's thread, C++ callers) is named after its most informative native frame:
 * the autograd node, else the outermost ATen op; never the allocator, the unwinder,
 * at::detail::empty*, the dispatcher, boxing, Python bindings or thread start-up. */
typedef enum sd_site_how {
    SD_SITE_FRAME,            /* the frame as written ("FILE:LINE NAME") */
    SD_SITE_AUTOGRAD,         /* torch::autograd::...::XBackward0::apply: "autograd XBackward0" */
    SD_SITE_ACCUMULATE_GRAD,  /* AccumulateGrad::apply: "autograd AccumulateGrad (parameter gradients)" */
    SD_SITE_ATEN,             /* at::_ops::NAME::call/redispatch: "aten::NAME" */
} sd_site_how;

typedef struct sd_site {
    int32_t site;     /* index of the site frame; -1 for an empty stack */
    int32_t via;      /* innermost library .py frame below the site, non-torch first */
    bool is_user;     /* false when no frame is user code and a fallback was taken */
    bool backward;    /* site and via index the stack's forward_frames, not its frames:
                       * memory allocated in the backward of that user line */
    uint8_t how;      /* sd_site_how of the site frame */
} sd_site;

/* The same for a stack of a snapshot, with its forward_frames: when the stack has no user
 * frame and its forward_frames have one, the site is that user frame, marked backward. */
void sd_attrib_site_of_stack(const sd_attrib *a, const sd_snapshot *s, uint32_t stack,
                             sd_site *out);

enum { SD_SITE_LABEL_MAX = 160 };

/* A site as people and JSON read it: {filename, line, name}. A native site has no file:
 * filename "" and line 0, and its readable label in `label` ("autograd IndexBackward0",
 * "aten::bmm"); a frame site has label "" and name the frame's name. */
typedef struct sd_site_label {
    const char *filename;     /* borrowed from the snapshot; "" for a native site */
    int64_t line;
    const char *name;         /* the frame's name (the raw C++ symbol for a native site) */
    char label[SD_SITE_LABEL_MAX];
    bool native;              /* how != SD_SITE_FRAME */
    bool backward;            /* allocated in the backward of this (forward) line */
} sd_site_label;

/* Fill `out` for the site of `stack`. @return false (out zeroed) for an empty stack. */
bool sd_site_label_of(const sd_snapshot *s, uint32_t stack, const sd_site *site,
                      sd_site_label *out);
/* The name to show: label when native, else the frame's name. */
const char *sd_site_label_name(const sd_site_label *l);

/* ---- Labels: a site as every view shows it (text, JSON `label`, HTML, folded, pprof).
 * A path is shown after its last site-packages/ or dist-packages/; else torch's from
 * torch/ on and Python's own after lib/pythonX.Y/; else without the directory that every
 * user frame of the file shares (by the built-in rules; a Jupyter kernel's directory
 * stays), computed once per snapshot. Labels are for people: the group key keeps whole
 * paths (it matches groups across files), JSON keeps them in `site.filename`. */

/* The site of `stack`: its frame's label, " [backward]" after a backward site; a native
 * site's name; "<no stack>" without one. @return the length written. */
size_t sd_site_text(const sd_snapshot *s, uint32_t stack, const sd_site *site, char *buf,
                    size_t size);
/* A group as every view names it, by the rules' group-by: the site (and --depth callers)
 * for site keys, the leaf frame for -g leaf, the site for -g stack, the file for -g file,
 * "FILE NAME" for -g function, the recorded string (control characters as '?') for
 * annotation and compile-context keys. `stack` is the group's representative stack in `s`,
 * `site` its site (NULL: computed here), `key` its key. with_via: " via VIA" after the
 * site, before the callers (sd_site_via_text), as the diff's tables show it; `top` and
 * `trace` show the label without it. @return the length written. */
size_t sd_group_label(const sd_attrib *a, const sd_snapshot *s, uint32_t stack,
                      const sd_site *site, const char *key, bool with_via, char *buf,
                      size_t size);

/* Write the group key of the stack into buf (always NUL-terminated when size > 0).
 * @return the key's length, as snprintf does: a result >= size means it was cut. */
size_t sd_attrib_key(const sd_attrib *a, const sd_frame *const *frames, size_t n,
                     char *buf, size_t size);

/* ---- Experimental (docs/architecture.md, "Tiers"): declared only where the includer
 * defines SNAPDIFF_EXPERIMENTAL; exported in the node LIBSNAPDIFF_EXPERIMENTAL_0.3, with no
 * API or ABI promise (they may change in any release). */
#ifdef SNAPDIFF_EXPERIMENTAL
/* What kind of code a frame is (hide and show patterns applied first). */
sd_frame_kind sd_attrib_classify(const sd_attrib *a, const sd_frame *f);
/* Does any focus pattern match the frame? (false when there are none) */
bool sd_attrib_frame_focused(const sd_attrib *a, const sd_frame *f);
/* PyTorch's own noise filter (_memory_viz.py): unwinder, interpreter, dispatcher frames. */
bool sd_frame_is_noise(const sd_frame *f);
/* sd_frame_is_noise, and the native frames that never name memory: the caching
 * allocator, the unwinder and CapturedTraceback, at::detail::empty*, the dispatcher and
 * boxing (c10::Dispatcher, BoxedKernelWrapper, wrap_kernel_functor...), the autograd
 * engine's own loop, Python bindings, libc and thread start-up. `-g leaf`, `-g stack`
 * and folded stacks skip them. */
bool sd_frame_is_native_noise(const sd_frame *f);
/* The part of a library path people recognise, for display only: after site-packages/
 * or dist-packages/, from torch/ on, after lib/pythonX.Y/. Else the path itself. Points
 * into `filename`. */
const char *sd_frame_short_path(const char *filename);
/* Find the site of frames[0..n) (innermost first). When no frame is user code: the first
 * .py frame outside torch, else the innermost .py frame; with no .py frame at all, the
 * innermost autograd node, else the outermost ATen op, else the innermost frame that is
 * not native noise (sd_frame_is_native_noise), else the innermost frame. */
void sd_attrib_site(const sd_attrib *a, const sd_frame *const *frames, size_t n,
                    sd_site *out);
/* Frame `index` (a site's site or via) of `stack`, read from its forward_frames when the
 * site is backward. NULL when out of range. */
const sd_frame *sd_site_frame(const sd_snapshot *s, uint32_t stack, const sd_site *site,
                              int32_t index);
/* The readable label of a native frame as `how` names it ("" for SD_SITE_FRAME); the
 * length, as snprintf returns it. */
size_t sd_site_native_name(const sd_frame *f, sd_site_how how, char *buf, size_t size);
/* What a native frame names by itself: SD_SITE_AUTOGRAD, SD_SITE_ACCUMULATE_GRAD,
 * SD_SITE_ATEN, else SD_SITE_FRAME. */
sd_site_how sd_frame_native_how(const sd_frame *f);
/* The innermost frame of frames[0..n) that is not native noise (0 when all are). */
size_t sd_attrib_leaf(const sd_frame *const *frames, size_t n);
/* A mode shim torch routes every call through (torch/utils/_device.py,
 * torch/overrides.py): never shown as `via`. */
bool sd_frame_is_mode_shim(const sd_frame *f);
/* `filename` as labels show it; points into `filename`. s NULL: no prefix is dropped. */
const char *sd_frame_label_path(const sd_snapshot *s, const char *filename);
/* A frame: "PATH:LINE NAME" (names past 60 characters cut, "..."), or what a native frame
 * names by itself ("autograd DivBackward0", "aten::bmm"). @return the length written. */
size_t sd_frame_label(const sd_snapshot *s, const sd_frame *f, char *buf, size_t size);
/* The site's `via` frame's label; "" (0) when it has none. */
size_t sd_site_via_text(const sd_snapshot *s, uint32_t stack, const sd_site *site, char *buf,
                        size_t size);
/* A table's row names made distinct. With -g stack, different stacks can share a label
 * (they differ where the label does not look: torch internals, callers); a row whose label
 * an earlier row of the table has gets " (stack 2)", " (stack 3)"... in table order, so
 * that two stacks never print as one. Other groupings' labels are distinct already.
 * label_at(ctx, j, ...) writes row j's label (sd_group_label); up to the 4096 rows before
 * `row` are compared. hashes[0..n_hashes), zeroed by the caller, may cache the rows' label
 * hashes across calls (NULL: none). @return the length written into buf. */
typedef void (*sd_row_label_fn)(void *ctx, size_t row, char *buf, size_t size);
size_t sd_group_label_distinct(const sd_attrib *a, sd_row_label_fn label_at, void *ctx,
                               size_t row, uint64_t *hashes, size_t n_hashes, char *buf,
                               size_t size);
#endif /* SNAPDIFF_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif

#endif
