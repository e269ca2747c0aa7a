/* model.h - the inside of sd_snapshot, shared by snapshot.c (public face), model.c
 * (building it from the pickle tree) and intern.c (frame and stack interning). */
#ifndef SNAPDIFF_MODEL_H
#define SNAPDIFF_MODEL_H

#include "pickle/value.h"
#include "snapdiff/snapshot.h"

enum { MODEL_MAX_WARNINGS = 64 };

typedef struct intern_table {
    uint32_t *slots;     /* id + 1, 0 = empty */
    size_t cap;          /* power of two */
    size_t count;
} intern_table;

struct sd_snapshot {
    sdp_arena arena;               /* the pickle tree, the model, the interned strings */
    char *source;
    sd_value root;
    uint64_t trailing;
    uint64_t n_values;
    int proto;
    bool legacy_list;

    sd_device *devices;
    size_t n_devices;

    sd_frame *frames;              /* interned frames (malloc, charged) */
    size_t n_frames, frames_cap;
    intern_table frame_index;
    uint32_t *stack_frames;        /* all stacks' frame ids, back to back */
    size_t n_stack_frames, stack_frames_cap;
    uint32_t *stack_start;         /* stack i = stack_frames[stack_start[i] .. stack_start[i+1]) */
    size_t n_stacks, stacks_cap;
    intern_table stack_index;
    /* Recently seen frames lists and frame dicts, by value bits -> id + 1 (intern.c):
     * thousands of blocks point at the same shared objects, and this keeps those lookups
     * in cache instead of touching each object's header, far away in the arena. */
    struct { uint64_t bits; uint32_t id1; } stack_cache[1 << 16];
    struct { uint64_t bits; uint32_t id1; } frame_cache[1 << 14];

    sd_trace_entry *records;       /* trace entries taken over while parsing (malloc) */
    size_t n_records, records_cap;
    struct { uint64_t bits; uint8_t action; } action_cache[8]; /* action strings are shared */
    uint8_t (*layouts)[16];        /* per record shape: which field each key fills */
    size_t n_layouts, layouts_cap;

    sd_allocator_settings settings;

    char *warnings[MODEL_MAX_WARNINGS];
    size_t n_warnings;
    uint64_t warnings_dropped;
    sd_error *err;                 /* during a build only */
    uint64_t ctx_offset;           /* innermost container being read: errors about a
                                    * scalar inside it point here */
};

/* intern.c */
sd_status sdp_intern_init(sd_snapshot *s);
void sdp_intern_free(sd_snapshot *s);
/* Stack id of a frames list (cached on the list, so shared lists cost one lookup). */
sd_status sdp_intern_stack(sd_snapshot *s, const sd_value *frames, uint32_t *id);

/* model.c */
/* The hook that turns trace-entry dicts into records while the pickle is parsed. */
sdp_record_hook sdp_model_record_hook(sd_snapshot *s);
sd_status sdp_model_build(sd_snapshot *s);
void sdp_model_warn(sd_snapshot *s, const char *fmt, ...) SDP_PRINTF(2, 3);
sd_status sdp_model_fail(sd_snapshot *s, const sd_value *where, const char *fmt, ...)
    SDP_PRINTF(3, 4);

#endif
