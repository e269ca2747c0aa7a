/* log_line.h - one line of a training log as log_read.c sees it, and the framework
 * presets that read the lines frameworks print (log_presets.c). Private to libsnapdiff.
 *
 * A preset claims the lines of its framework (returns true) and fills the record with
 * the figures they give, already in bytes: each preset applies its framework's own unit
 * rule (torch-based loggers divide by 1024^2 or 1024^3, whatever they print as the unit;
 * nvidia-smi's MB and MiB are 2^20 bytes). */
#ifndef SNAPDIFF_LOGS_LOG_LINE_H
#define SNAPDIFF_LOGS_LOG_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sdp_field {
    F_NONE, F_STEP, F_TIME, F_RANK, F_GPU, F_ALLOC, F_RESERVED, F_MAX_ALLOC, F_MAX_RESERVED,
    F_RETRIES, F_OOMS, F_USED, F_FREE, F_TOTAL, F_COUNT
};

typedef struct sdp_log_record {
    bool has[F_COUNT];
    double v[F_COUNT];
    const char *bad;           /* why a figure could not be read */
    bool by_sample;            /* the line has no step: x is the sample's index */
    /* wandb's system metrics: several GPUs on one line (system.gpu.N.memoryAllocatedBytes);
     * NaN where a GPU has none */
    int gpus;                  /* 1 + the highest N seen, 0: none */
    double gpu_used[16];
    bool gpu_percent_only;     /* only system.gpu.N.memoryAllocated, a percentage */
    bool per_gpu;              /* its F_GPU splits the series (one GPU of a wandb line) */
} sdp_log_record;

#define SDP_DMON_COLUMNS 32

/* What a preset remembers between lines of one file. */
typedef struct sdp_preset_state {
    int64_t table_gpu;         /* nvidia-smi's table: the GPU row just read, or -1 */
    int64_t table_row;         /* memory rows since the table's header */
    bool has_time; double time;   /* the table's time stamp (its first line) */
    int dmon_cols;             /* nvidia-smi dmon: its header's columns (0: none yet) */
    int dmon_gpu, dmon_fb, dmon_date, dmon_time;   /* column numbers, -1 when absent */
    const char *none_why;      /* the preset claimed lines but none can give a figure */
} sdp_preset_state;

typedef struct sdp_log_preset {
    const char *name;          /* "torchtitan", "megatron", ... */
    const char *key;           /* text each of its lines holds: a fast reject */
    const char *hint;          /* other text its logs hold: the closest format when none reads */
    const char *example;       /* a line as the framework prints it */
    const char *figure;        /* what the figure is, and its unit rule */
    /* @return true when the line is this preset's; figures (if any) into r */
    bool (*read)(const char *s, size_t len, sdp_log_record *r, sdp_preset_state *st);
} sdp_log_preset;

extern const sdp_log_preset sdp_log_presets[];
extern const size_t sdp_log_preset_total;

void sdp_record_set(sdp_log_record *r, enum sdp_field f, double v);
/* The first occurrence of word in s[0..len) that no letter, digit or '_' precedes, or NULL. */
const char *sdp_find_word(const char *s, size_t len, const char *word);
/* A number with an optional unit right after s[at..): the unit's multiplier wins over mult
 * (see sdp_log_parse_figure); need_unit: a figure without one is no figure. */
bool sdp_figure_at(const char *s, size_t len, const char *at, double mult, bool need_unit,
                   double *out);
/* A decimal number (digits, a point, an exponent, thousands separators ","). */
bool sdp_parse_number(const char *s, size_t len, double *out, size_t *used);
/* "2024/05/01 12:00:00.123", "2024-05-01T12:00:00", "20240501 12:00:00" or ctime's
 * "Fri Dec  4 10:18:58 2026": seconds since 1970 (UTC as written; only differences
 * matter). */
bool sdp_parse_timestamp(const char *s, size_t len, double *out);

#endif
