/* log_read.h - the memory figures a training log already holds, read line by line
 * (log_read.c): text lines, JSON Lines, CSV with a header, nvidia-smi CSV; plain or
 * gzip, `-` for stdin. Private to libsnapdiff (curve.h is the public face).
 *
 * Memory is bounded whatever the log's length: each series keeps at most `max_samples`
 * samples; when it is full, neighbouring samples are merged in pairs (the lowest and the
 * highest figure of the pair kept, the first x) and every later sample is merged into
 * buckets of the new stride before it is stored. A line longer than SDP_LOG_MAX_LINE
 * bytes is a bad line. */
#ifndef SNAPDIFF_LOGS_LOG_READ_H
#define SNAPDIFF_LOGS_LOG_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapdiff/common.h"

#define SDP_LOG_MAX_LINE (64u << 10)
#define SDP_LOG_MAX_SERIES 1024
#define SDP_LOG_DEFAULT_MAX_SAMPLES 32768

typedef enum sdp_log_format {
    SDP_LOG_AUTO, SDP_LOG_TEXT, SDP_LOG_JSONL, SDP_LOG_CSV, SDP_LOG_NVSMI
} sdp_log_format;

/* Which figure a series follows, the first its log has in this order: allocated,
 * reserved, max_allocated, max_reserved (a running or per-interval maximum: a creep of the
 * peak, never a leak), device_used (nvidia-smi: reserved plus the CUDA context and other
 * processes), device_free (nvidia-smi's memory.free when no total turns it into used). */
typedef enum sdp_log_measure {
    SDP_LOG_ALLOCATED, SDP_LOG_RESERVED, SDP_LOG_MAX_ALLOCATED, SDP_LOG_MAX_RESERVED,
    SDP_LOG_USED, SDP_LOG_FREE
} sdp_log_measure;

/* The x of a series: the log's step, seconds from its first time stamp, or, for a log
 * that prints neither beside its figures (DeepSpeed's see_memory_usage), the sample's
 * index. */
typedef enum sdp_log_axis { SDP_AXIS_STEP, SDP_AXIS_SECOND, SDP_AXIS_SAMPLE } sdp_log_axis;

/* An out-of-memory error seen in the text: its line, rank and the figures its message
 * gives (NaN where it gives none). */
typedef struct sdp_log_oom {
    size_t file;
    uint64_t line;
    int64_t rank, gpu;        /* -1: not said */
    const char *kind;         /* "CUDA", "HIP", "XPU" or "device" */
    double tried, capacity, free, in_use, allocated, reserved_unallocated;
} sdp_log_oom;

#define SDP_LOG_MAX_OOMS 256
/* Runs per (file, rank, GPU): a log whose step goes back more often than this (two
 * counters printed in turn) keeps its last run as one series. */
#define SDP_LOG_MAX_RUNS 64

typedef struct sdp_log_series {
    size_t file;              /* index of the input */
    int64_t rank;             /* the log's rank field, or -1 */
    int64_t gpu;              /* nvidia-smi's index, or -1 */
    int64_t run;              /* 0, then 1, 2... each time the step counter goes back */
    sdp_log_axis axis;
    sdp_log_measure measure;
    double last_x;            /* the last raw sample's x (a step that goes back: a new run) */
    /* stored samples, in arrival order: x, the lowest and highest figure, the smallest
     * reserved - allocated gap (NaN where the log has no reserved figure) */
    double *x, *lo, *hi, *gap;
    size_t n, cap;
    uint64_t stride;          /* raw samples per stored sample (1, 2, 4, ...) */
    double pend_x, pend_lo, pend_hi, pend_gap;
    uint64_t pend_n;
    uint64_t n_raw;           /* samples read */
    /* scalars seen along the way (has_* false when never) */
    bool has_reserved; double reserved_last;
    bool has_max_alloc; double max_alloc_last;      /* max_memory_allocated, kept apart */
    bool has_retries; double retries_first, retries_last;
    bool has_ooms; double ooms_first, ooms_last;
    bool has_total; double total;                    /* nvidia-smi memory.total */
} sdp_log_series;

typedef struct sdp_log {
    sdp_log_series *series;
    size_t n_series, cap_series;
    size_t max_samples;
    sdp_log_oom *ooms;      /* the first SDP_LOG_MAX_OOMS */
    size_t n_ooms;
    uint64_t ooms_seen;
    const char *pattern;      /* --pattern: a regular expression with named groups, or NULL */
} sdp_log;

/* What one file gave. */
typedef struct sdp_log_file_info {
    sdp_log_format format;  /* as detected or forced */
    const char *preset;       /* the framework's format read ("torchtitan"...), or NULL */
    uint64_t lines;
    uint64_t samples;
    uint64_t bad_lines;       /* lines that looked like figures and could not be read */
    uint64_t first_bad_line;  /* 1-based; 0 = none */
    const char *first_bad_why;
} sdp_log_file_info;

void sdp_log_init(sdp_log *log, size_t max_samples);
void sdp_log_free(sdp_log *log);
/* Read one file (path, or "-" for stdin; gzip detected) as input number `file`, adding its
 * series to log. @return SD_OK; SD_EIO (cannot open/read), SD_ESNAPSHOT (no memory figure
 * at all: the message says what was looked for), SD_ELIMIT (too many series), SD_ENOMEM. */
sd_status sdp_log_read(sdp_log *log, const char *path, size_t file,
                         sdp_log_format format, sdp_log_file_info *info, sd_error *err);
/* Flush pending buckets so that x/lo/hi/gap hold every sample read. */
void sdp_log_finish(sdp_log *log);
/* "allocated", "reserved", "max_allocated", "max_reserved", "device_used", "device_free". */
const char *sdp_log_measure_name(sdp_log_measure m);
/* "text", "jsonl", "csv", "nvidia-smi". */
const char *sdp_log_format_name(sdp_log_format f);
/* Parse a figure as logs write it: a number and an optional unit, B, K/KB/KiB, M/MB/MiB,
 * G/GB/GiB, T/TB/TiB (all binary: G and GB read as 2^30, as torch users mean them).
 * *used = characters consumed. @return false on junk, a negative or non-finite number, or
 * more than 2^62 bytes. */
bool sdp_log_parse_figure(const char *s, size_t len, double mult, double *out, size_t *used);

#endif
