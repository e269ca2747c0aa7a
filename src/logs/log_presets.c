/* log_presets.c - the lines training frameworks print, read as they print them
 * (log_line.h). Each preset follows its framework's own logging code, named beside it,
 * and applies its unit rule: torch-based loggers divide by 1024^2 (MB) or 1024^3 (GB,
 * GiB), so their MB and GB are 2^20 and 2^30 bytes; nvidia-smi's MiB and MB are 2^20. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/base.h"
#include "logs/log_line.h"

#define MiB 1048576.0

static const char *after(const char *p, const char *word) { return p ? p + strlen(word) : NULL; }

/* An integer or decimal right after p (spaces skipped). */
static bool number_at(const char *s, size_t len, const char *p, double *out)
{
    if (!p) return false;
    size_t off = (size_t)(p - s), used;
    while (off < len && (s[off] == ' ' || s[off] == '\t')) off++;
    return off < len && sdp_parse_number(s + off, len - off, out, &used);
}

/* The figure after word in s: word must be there, unit optional unless need_unit. */
static bool figure_after(const char *s, size_t len, const char *word, double mult,
                         bool need_unit, double *out)
{
    const char *p = sdp_find_word(s, len, word);
    return p && sdp_figure_at(s, len, p + strlen(word), mult, need_unit, out);
}

/* torchtitan, torchtitan/components/metrics.py MetricsProcessor.log: "memory:" is
 * DeviceMemoryMonitor.get_peak_stats' max_reserved_gib, reserved_bytes.all.peak / 1024^3
 * of the interval since the last log (reset_peak_stats after each line). */
static bool read_torchtitan(const char *s, size_t len, sdp_log_record *r, sdp_preset_state *st)
{
    (void)st;
    const char *m = sdp_find_word(s, len, "memory:"), *step = sdp_find_word(s, len, "step:");
    if (!m || !step) return false;
    if (sdp_find_word(s, len, "validate step:")) return true;   /* validation: its own peak */
    double x, v;
    if (!number_at(s, len, after(step, "step:"), &x)) return false;
    if (!sdp_figure_at(s, len, m + 7, 1, true, &v)) {
        r->bad = "torchtitan's memory: without its GiB";
        return true;
    }
    sdp_record_set(r, F_STEP, x);
    sdp_record_set(r, F_MAX_RESERVED, v);
    return true;
}

/* Megatron-LM, megatron/training/utils.py report_memory: torch.cuda.memory_allocated() and
 * the others / (1024 * 1024), printed as "[Rank N] (after N iterations) memory (MB) | ...". */
static bool read_megatron(const char *s, size_t len, sdp_log_record *r, sdp_preset_state *st)
{
    (void)st;
    static const struct { const char *word; enum sdp_field f; } cells[] = {
        {"| allocated:", F_ALLOC}, {"| max allocated:", F_MAX_ALLOC},
        {"| reserved:", F_RESERVED}, {"| max reserved:", F_MAX_RESERVED},
    };
    const char *mb = sdp_find_word(s, len, "memory (MB)");
    if (!mb) return false;
    double x, v;
    if (number_at(s, len, after(sdp_find_word(s, len, "(after "), "(after "), &x))
        sdp_record_set(r, F_STEP, x);
    else
        r->by_sample = true;
    size_t rest = len - (size_t)(mb - s);
    for (size_t i = 0; i < SDP_ARRAY_LEN(cells); i++) {
        const char *p = sdp_find_word(mb, rest, cells[i].word);
        if (!p) continue;
        if (!sdp_figure_at(mb, rest, p + strlen(cells[i].word), MiB, false, &v)) {
            r->bad = "a Megatron-LM memory figure that cannot be read";
            return true;
        }
        sdp_record_set(r, cells[i].f, v);
    }
    return true;
}

/* DeepSpeed, deepspeed/runtime/utils.py see_memory_usage: MA (memory_allocated), Max_MA,
 * CA (memory_reserved), Max_CA, each / (1024 * 1024 * 1024) rounded, "GB". Its label is
 * on the line before and the line has no step: the x is the sample's index. */
static bool read_deepspeed_memory(const char *s, size_t len, sdp_log_record *r,
                                  sdp_preset_state *st)
{
    (void)st;
    double ma, v;
    if (!figure_after(s, len, "MA ", 1, true, &ma)) return false;
    sdp_record_set(r, F_ALLOC, ma);
    if (figure_after(s, len, "Max_MA ", 1, true, &v)) sdp_record_set(r, F_MAX_ALLOC, v);
    if (figure_after(s, len, "CA ", 1, true, &v)) sdp_record_set(r, F_RESERVED, v);
    if (figure_after(s, len, "Max_CA ", 1, true, &v)) sdp_record_set(r, F_MAX_RESERVED, v);
    r->by_sample = true;
    return true;
}

/* DeepSpeed, deepspeed/utils/timer.py ThroughputTimer.stop: "epoch=E/micro_step=M/
 * global_step=G, ..., MemAllocated=XGB, MaxMemAllocated=YGB" (memory_allocated() / 1024**3). */
static bool read_deepspeed_timer(const char *s, size_t len, sdp_log_record *r,
                                 sdp_preset_state *st)
{
    (void)st;
    double x, v;
    if (!figure_after(s, len, "MemAllocated=", 1, true, &v)) return false;
    if (!number_at(s, len, after(sdp_find_word(s, len, "global_step="), "global_step="), &x))
        return false;
    sdp_record_set(r, F_STEP, x);
    sdp_record_set(r, F_ALLOC, v);
    if (figure_after(s, len, "MaxMemAllocated=", 1, true, &v)) sdp_record_set(r, F_MAX_ALLOC, v);
    return true;
}

/* "[a/b]" at p (spaces inside allowed): a and b. */
static bool bracket_pair(const char *s, size_t len, const char *p, double *a, double *b)
{
    if (!p || p >= s + len || *p != '[') return false;
    const char *slash = memchr(p, '/', (size_t)(s + len - p));
    return slash && number_at(s, len, p + 1, a) && number_at(s, len, slash + 1, b);
}

static const char *skip_spaces(const char *p, const char *end)
{
    while (p && p < end && (*p == ' ' || *p == '\t')) p++;
    return p;
}

/* mmengine (OpenMMLab), mmengine/runner/log_processor.py LogProcessor.get_log_after_iter:
 * "memory: N" is _get_max_memory's max_memory_allocated() // (1024 * 1024), reset after
 * each log: MB are 2^20 bytes, no unit printed. "Epoch(train) [E][i/n]" is step
 * (E - 1) * n + i; "Iter(train) [i/n]" is step i. */
static bool read_mmengine(const char *s, size_t len, sdp_log_record *r, sdp_preset_state *st)
{
    (void)st;
    const char *ep = sdp_find_word(s, len, "Epoch(train)"), *it = sdp_find_word(s, len, "Iter(train)");
    if (!ep && !it)
        return sdp_find_word(s, len, "Epoch(") || sdp_find_word(s, len, "Iter(");   /* val, test */
    const char *end = s + len;
    double e = 1, a, n, v;
    if (ep) {
        const char *p = skip_spaces(ep + 12, end);
        if (!number_at(s, len, p < end && *p == '[' ? p + 1 : NULL, &e)) return false;
        p = memchr(p, ']', (size_t)(end - p));
        if (!bracket_pair(s, len, p ? skip_spaces(p + 1, end) : NULL, &a, &n)) return false;
    } else if (!bracket_pair(s, len, skip_spaces(it + 11, end), &a, &n)) {
        return false;
    }
    if (!figure_after(s, len, "memory:", MiB, false, &v)) return true;
    sdp_record_set(r, F_STEP, ep ? (e - 1) * n + a : a);
    sdp_record_set(r, F_MAX_ALLOC, v);
    return true;
}

/* Swin Transformer, main.py train_one_epoch: "Train: [E/EPOCHS][i/n] ... mem {memory_used:.0f}MB"
 * with memory_used = max_memory_allocated() / (1024.0 * 1024.0), never reset: a running
 * maximum. Step E * n + i. */
static bool read_swin(const char *s, size_t len, sdp_log_record *r, sdp_preset_state *st)
{
    (void)st;
    const char *t = sdp_find_word(s, len, "Train: [");
    if (!t) return sdp_find_word(s, len, "Test: [") != NULL;
    double e, epochs, a, n, v;
    const char *p = t + 7, *end = s + len;
    if (!bracket_pair(s, len, p, &e, &epochs)) return false;
    p = memchr(p, ']', (size_t)(end - p));
    if (!p || !bracket_pair(s, len, p + 1, &a, &n)) return false;
    if (!figure_after(s, len, "mem ", MiB, true, &v)) return false;
    sdp_record_set(r, F_STEP, e * n + a);
    sdp_record_set(r, F_MAX_ALLOC, v);
    return true;
}

/* nvidia-smi's table, printed again and again (nvidia-smi -l N, or a loop): its time
 * stamp line, "| NVIDIA-SMI ..." header, each GPU's row "|   0  NVIDIA H200 ... | bus id
 * ..." and below it "| N/A 30C P0 120W / 700W |  12345MiB / 143771MiB | ...": memory used
 * and total of the whole device (every process). The per-process table is not read. */
/* needle anywhere in s[0..len) */
static const char *find_text(const char *s, size_t len, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= len; i++)
        if (s[i] == needle[0] && memcmp(s + i, needle, k) == 0) return s + i;
    return NULL;
}

static bool read_nvsmi_table(const char *s, size_t len, sdp_log_record *r, sdp_preset_state *st)
{
    size_t trimmed = len;
    while (trimmed && s[trimmed - 1] == ' ') trimmed--;
    if (trimmed >= 20 && trimmed <= 32 && isupper((unsigned char)s[0]) && s[3] == ' ') {
        double t;   /* ctime's "Fri Dec  4 10:18:58 2026": kept, the line is not claimed */
        if (sdp_parse_timestamp(s, trimmed, &t)) { st->has_time = true; st->time = t; }
        return false;
    }
    if (s[0] != '|') return false;
    if (sdp_find_word(s, len, "NVIDIA-SMI")) {
        st->table_row = 0;
        st->table_gpu = -1;
        return true;
    }
    const char *slash = find_text(s, len, "MiB /");
    if (!slash) {
        size_t i = 1;
        while (i < len && s[i] == ' ') i++;
        size_t d = i;
        while (i < len && isdigit((unsigned char)s[i])) i++;
        if (i > d && i + 2 < len && s[i] == ' ' && s[i + 1] == ' ' && memchr(s, ':', len) &&
            !find_text(s, len, "MiB")) {
            st->table_gpu = strtoll(s + d, NULL, 10);   /* a GPU's row: its index */
            return true;
        }
        return false;
    }
    double used, total;
    const char *num = slash;
    while (num > s && (isdigit((unsigned char)num[-1]) || num[-1] == '.')) num--;
    if (!sdp_figure_at(s, len, num, MiB, true, &used) ||
        !sdp_figure_at(s, len, slash + 5, MiB, true, &total))
        return false;
    sdp_record_set(r, F_GPU, (double)(st->table_gpu >= 0 ? st->table_gpu : st->table_row));
    sdp_record_set(r, F_USED, used);
    sdp_record_set(r, F_TOTAL, total);
    if (st->has_time) sdp_record_set(r, F_TIME, st->time);
    else r->by_sample = true;
    st->table_row++;
    st->table_gpu = -1;
    return true;
}

/* Whitespace-separated tokens of s into tok (at most max). */
static int tokens(const char *s, size_t len, const char **tok, size_t *tlen, int max)
{
    int n = 0;
    for (size_t i = 0; i < len && n < max;) {
        while (i < len && (s[i] == ' ' || s[i] == '\t')) i++;
        if (i >= len) break;
        size_t b = i;
        while (i < len && s[i] != ' ' && s[i] != '\t') i++;
        tok[n] = s + b;
        tlen[n++] = i - b;
    }
    return n;
}

static bool token_is(const char *t, size_t n, const char *w)
{
    return strlen(w) == n && strncasecmp(t, w, n) == 0;
}

/* nvidia-smi dmon: "# gpu fb bar1 ..." (or "#Date Time gpu ...", -o DT) then rows. fb is the
 * frame buffer used, in MB (2^20 bytes); dmon's default "mem" column is memory bandwidth
 * utilisation (%), not memory: without fb there is no figure. */
static bool read_nvsmi_dmon(const char *s, size_t len, sdp_log_record *r, sdp_preset_state *st)
{
    const char *tok[SDP_DMON_COLUMNS];
    size_t tl[SDP_DMON_COLUMNS];
    if (s[0] == '#') {
        if (memchr(s, '=', len) || memchr(s, ':', len)) return false;
        int n = tokens(s + 1, len - 1, tok, tl, SDP_DMON_COLUMNS);
        int gpu = -1, fb = -1, date = -1, time = -1;
        for (int i = 0; i < n; i++) {
            if (token_is(tok[i], tl[i], "gpu")) gpu = i;
            else if (token_is(tok[i], tl[i], "fb")) fb = i;
            else if (token_is(tok[i], tl[i], "date")) date = i;
            else if (token_is(tok[i], tl[i], "time")) time = i;
        }
        if (gpu < 0) return st->dmon_cols > 0 && n >= 3;   /* its units line */
        if (gpu > 2 || n < 3) return false;   /* "# gpu ..." or "#Date Time gpu ...": first */
        st->dmon_cols = n;
        st->dmon_gpu = gpu;
        st->dmon_fb = fb;
        st->dmon_date = date;
        st->dmon_time = time;
        st->none_why = fb < 0 ? "nvidia-smi dmon without its fb column (memory used); its "
                                "'mem' column is memory bandwidth utilisation: run "
                                "nvidia-smi dmon -s m (or -s um)" : NULL;
        return true;
    }
    if (!st->dmon_cols) return false;
    int n = tokens(s, len, tok, tl, SDP_DMON_COLUMNS);
    if (n != st->dmon_cols) return false;
    double gpu, v;
    size_t used;
    if (!sdp_parse_number(tok[st->dmon_gpu], tl[st->dmon_gpu], &gpu, &used)) return false;
    if (st->dmon_fb < 0) return true;
    if (!sdp_parse_number(tok[st->dmon_fb], tl[st->dmon_fb], &v, &used) || used != tl[st->dmon_fb])
        return true;                                    /* "-": not measured */
    sdp_record_set(r, F_GPU, gpu);
    sdp_record_set(r, F_USED, v * MiB);
    double t;
    if (st->dmon_date >= 0 && st->dmon_time >= 0 &&
        sdp_parse_timestamp(tok[st->dmon_date],
                            (size_t)(tok[st->dmon_time] + tl[st->dmon_time] - tok[st->dmon_date]), &t))
        sdp_record_set(r, F_TIME, t);
    else
        r->by_sample = true;
    return true;
}

const sdp_log_preset sdp_log_presets[] = {
    {"mmengine", "memory: ", "mmengine",
     "2026/05/01 12:00:00 - mmengine - INFO - Epoch(train)  [1][ 50/391]  lr: 1.0000e-02  "
     "eta: 0:10:00  time: 0.5000  data_time: 0.0100  memory: 6814  loss: 2.3026",
     "max_allocated: memory: N is MB of 2^20 bytes", read_mmengine},
    {"torchtitan", "memory:", "[titan]",
     "[rank0]:[titan] 2026-05-01 12:00:00,123 - root - INFO - step: 10  loss:  7.9123  "
     "grad_norm:  1.2345  memory: 35.21GiB(37.06%)  tps: 3,090  tflops: 179.96  mfu: 18.20%",
     "max_reserved (the peak since the last line): GiB", read_torchtitan},
    {"megatron", "memory (MB)", "iterations) memory",
     "[Rank 0] (after 10 iterations) memory (MB) | allocated: 1234.56 | max allocated: 2345.6 "
     "| reserved: 3000.0 | max reserved: 3000.0",
     "allocated (reserved, max allocated beside it): MB of 2^20 bytes", read_megatron},
    {"deepspeed", "Max_MA", "see_memory_usage",
     "[2026-05-01 12:00:00,123] [INFO] [utils.py:781:see_memory_usage] MA 6.08 GB         "
     "Max_MA 8.11 GB         CA 8.13 GB         Max_CA 8 GB",
     "allocated (MA; CA reserved beside it): GB of 2^30 bytes; x is the sample's index",
     read_deepspeed_memory},
    {"deepspeed-timer", "MemAllocated=", "global_step=",
     "epoch=0/micro_step=80/global_step=10, RunningAvgSamplesPerSec=31.2, "
     "CurrSamplesPerSec=30.9, MemAllocated=3.96GB, MaxMemAllocated=22.95GB",
     "allocated: GB of 2^30 bytes", read_deepspeed_timer},
    {"swin", "mem ", "Train: [",
     "[2026-05-01 12:00:00 swin_tiny] (main.py 230): INFO Train: [0/300][100/1251]\teta 0:10:00 "
     "lr 0.000100\ttime 0.5000 (0.6000)\tloss 6.9000 (6.9100)\tgrad_norm 1.0 (1.0)\tmem 10584MB",
     "max_allocated (a running maximum): MB of 2^20 bytes", read_swin},
    {"nvidia-smi-table", NULL, "NVIDIA-SMI",
     "| N/A   30C    P0   120W /  700W |  12345MiB / 143771MiB |      5%      Default |",
     "device_used (every process on the GPU) and its total: MiB", read_nvsmi_table},
    {"nvidia-smi-dmon", NULL, "# gpu",
     "# gpu     fb   bar1   ccpm   (then rows:    0  40123      5      0)",
     "device_used: the fb column, MB of 2^20 bytes (run dmon -s m)", read_nvsmi_dmon},
};
const size_t sdp_log_preset_total = SDP_ARRAY_LEN(sdp_log_presets);
