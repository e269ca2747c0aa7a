/* attrib.h - which frame of an allocation stack names the culprit, and the group keys.
 *
 * Attribution: each live block (state ALLOCATED) is charged to a group key computed from
 * its allocation stack (innermost frame first). The default key is the allocation *site*:
 * the first frame, walking outwards, that is the user's own Python code - not native
 * (C++, "??"), not generated ("<frozen ...>", "<string>"), not torch, not Python's own
 * library, not a third-party package. The innermost library Python frame below the site
 * (outside torch when there is one) is kept as `via`, so growth inside a library still
 * names the library. Definitions in docs/json-diff.md; tests/truth_diff.py computes the
 * same figures in Python. Used by the profile (profile.h) and the diff (diff.h).
 */
#ifndef SNAPDIFF_ATTRIB_H
#define SNAPDIFF_ATTRIB_H

#include <stdbool.h>
#include "snapshot.h"

typedef enum sd_group_by {
    SD_GROUP_SITE,       /* "FILE:LINE NAME" of the site (+ --depth user callers) */
    SD_GROUP_LEAF,       /* "FILE:LINE NAME" of the innermost frame, as written */
    SD_GROUP_STACK,      /* every frame but PyTorch's noise, "FILE:LINE NAME;..." inner first */
    SD_GROUP_FILE,       /* FILE of the site */
    SD_GROUP_FUNCTION,   /* "FILE NAME" of the site */
    SD_GROUP_BY_COUNT
} sd_group_by;

/* The one table of group-by names ("site", "leaf", "stack", "file", "function"), in enum
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
/* What the rules were made with. */
sd_group_by sd_attrib_group_by(const sd_attrib *a);
int sd_attrib_depth(const sd_attrib *a);
bool sd_attrib_has_focus(const sd_attrib *a);       /* any focus pattern given */
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

#endif
