/* curve_read.c - memory figures from training logs, streamed (curve_read.h).
 *
 * One line at a time through zlib's gzgets (plain files pass through unchanged), a
 * fixed line buffer, and per series a sample store that halves itself when full: the
 * memory used does not depend on the log's length. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <unistd.h>
#include <zlib.h>

#include "base/base.h"
#include "model/curve_read.h"

/* ---------- the fields a log may name ---------- */

enum field { F_NONE, F_STEP, F_TIME, F_RANK, F_GPU, F_ALLOC, F_RESERVED, F_MAX_ALLOC,
             F_RETRIES, F_OOMS, F_USED, F_TOTAL };

static const struct { const char *name; enum field f; } field_names[] = {
    {"step", F_STEP}, {"global_step", F_STEP}, {"iteration", F_STEP}, {"iter", F_STEP},
    {"time", F_TIME}, {"timestamp", F_TIME}, {"rank", F_RANK},
    {"gpu", F_GPU}, {"index", F_GPU},
    {"alloc", F_ALLOC}, {"allocated", F_ALLOC}, {"mem_alloc", F_ALLOC},
    {"memory_allocated", F_ALLOC}, {"allocated_bytes.all.current", F_ALLOC},
    {"reserved", F_RESERVED}, {"memory_reserved", F_RESERVED}, {"mem_reserved", F_RESERVED},
    {"reserved_bytes.all.current", F_RESERVED},
    {"max_memory_allocated", F_MAX_ALLOC}, {"max_allocated", F_MAX_ALLOC},
    {"allocated_bytes.all.peak", F_MAX_ALLOC},
    {"num_alloc_retries", F_RETRIES}, {"num_ooms", F_OOMS},
    {"memory.used", F_USED}, {"memory.total", F_TOTAL},
};

static const struct { const char *suffix; double mult; } unit_suffixes[] = {
    {"_bytes", 1}, {"_b", 1}, {"_kib", 1024.0}, {"_kb", 1024.0}, {"_mib", 1048576.0},
    {"_mb", 1048576.0}, {"_gib", 1073741824.0}, {"_gb", 1073741824.0},
};

static bool name_is(const char *s, size_t len, const char *name)
{
    return strlen(name) == len && strncasecmp(s, name, len) == 0;
}

/* The field `s[0..len)` names, and the unit its name carries (allocated_mib: 2^20). */
static enum field classify(const char *s, size_t len, double *mult)
{
    *mult = 1;
    for (size_t i = 0; i < SDP_ARRAY_LEN(field_names); i++)
        if (name_is(s, len, field_names[i].name)) return field_names[i].f;
    for (size_t u = 0; u < SDP_ARRAY_LEN(unit_suffixes); u++) {
        size_t k = strlen(unit_suffixes[u].suffix);
        if (len <= k || strncasecmp(s + len - k, unit_suffixes[u].suffix, k) != 0) continue;
        for (size_t i = 0; i < SDP_ARRAY_LEN(field_names); i++) {
            enum field f = field_names[i].f;
            if (f < F_ALLOC || f == F_RETRIES || f == F_OOMS) continue;
            if (name_is(s, len - k, field_names[i].name)) {
                *mult = unit_suffixes[u].mult;
                return f;
            }
        }
    }
    return F_NONE;
}

static bool is_memory(enum field f) { return f == F_ALLOC || f == F_RESERVED || f == F_USED; }

/* ---------- numbers and units ---------- */

#define MAX_BYTES 4611686018427387904.0   /* 2^62 */

/* A decimal number at s (digits, one point, an exponent). */
static bool parse_number(const char *s, size_t len, double *out, size_t *used)
{
    char buf[64];
    size_t n = 0;
    while (n < len && n < sizeof buf - 1 &&
           (isdigit((unsigned char)s[n]) || s[n] == '.' ||
            ((s[n] == 'e' || s[n] == 'E') && n > 0 && n + 1 < len &&
             (isdigit((unsigned char)s[n + 1]) || s[n + 1] == '+' || s[n + 1] == '-')) ||
            ((s[n] == '+' || s[n] == '-') && n > 0 && (s[n - 1] == 'e' || s[n - 1] == 'E'))))
        n++;
    if (n == 0 || n >= sizeof buf - 1 || !isdigit((unsigned char)s[0])) return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (end == buf || !isfinite(v) || v < 0) return false;
    *out = v;
    *used = (size_t)(end - buf);
    return true;
}

bool sdp_curve_parse_figure(const char *s, size_t len, double mult, double *out, size_t *used)
{
    static const struct { const char *unit; double mult; } units[] = {
        {"b", 1}, {"k", 1024.0}, {"kb", 1024.0}, {"kib", 1024.0},
        {"m", 1048576.0}, {"mb", 1048576.0}, {"mib", 1048576.0},
        {"g", 1073741824.0}, {"gb", 1073741824.0}, {"gib", 1073741824.0},
        {"t", 1099511627776.0}, {"tb", 1099511627776.0}, {"tib", 1099511627776.0},
    };
    double v;
    size_t k;
    if (!parse_number(s, len, &v, &k)) return false;
    if (k < len && (s[k] == '.' || isdigit((unsigned char)s[k]))) return false;   /* 1.5.5 */
    size_t j = k;
    while (j < len && s[j] == ' ') j++;
    size_t w = 0;
    while (j + w < len && isalpha((unsigned char)s[j + w])) w++;
    for (size_t u = 0; w && u < SDP_ARRAY_LEN(units); u++)
        if (name_is(s + j, w, units[u].unit)) {
            mult = units[u].mult;
            k = j + w;
            break;
        }
    v *= mult;
    if (!isfinite(v) || v >= MAX_BYTES) return false;
    *out = v;
    *used = k;
    return true;
}

/* ---------- one record's figures ---------- */

typedef struct record {
    bool has[F_TOTAL + 1];
    double v[F_TOTAL + 1];
    const char *bad;           /* why a figure could not be read */
} record;

static void record_set(record *r, enum field f, double v)
{
    if (f == F_NONE) return;
    r->has[f] = true;
    r->v[f] = v;
}

/* "2024/05/01 12:00:00.123" or "2024-05-01T12:00:00": seconds since 1970 (UTC, as
 * written; only differences matter). */
static bool parse_timestamp(const char *s, size_t len, double *out)
{
    char buf[64];
    if (len >= sizeof buf) return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    int y, mo, d, h, mi;
    double sec;
    char sep1, sep2, t;
    if (sscanf(buf, " %d%c%d%c%d%c%d:%d:%lf", &y, &sep1, &mo, &sep2, &d, &t, &h, &mi, &sec) != 9)
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 24 || mi < 0 || mi > 59 ||
        !(sec >= 0 && sec < 61) || y < 1970 || y > 9999)
        return false;
    /* days from civil (Howard Hinnant's algorithm) */
    int yy = y - (mo <= 2);
    int era = yy / 400;
    int yoe = yy - era * 400;
    int doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    double days = (double)era * 146097 + doe - 719468;
    *out = days * 86400 + h * 3600 + mi * 60 + sec;
    return true;
}

/* A value for field f from text (a cell, a JSON string or number, a text token). */
static bool field_value(enum field f, const char *s, size_t len, double mult, double *out,
                        size_t *used)
{
    if (f == F_TIME) {
        if (parse_timestamp(s, len, out)) {
            *used = len;
            return true;
        }
        return parse_number(s, len, out, used) && *out < 1e15;
    }
    if (f == F_STEP || f == F_RANK || f == F_GPU || f == F_RETRIES || f == F_OOMS)
        return parse_number(s, len, out, used) && *out < 1e15;
    return sdp_curve_parse_figure(s, len, mult, out, used);
}

/* ---------- text lines: key=value, key: value, key value ---------- */

static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '.'; }

static void parse_text(const char *s, size_t len, record *r)
{
    size_t i = 0;
    while (i < len) {
        if (!isalpha((unsigned char)s[i]) || (i > 0 && ident_char(s[i - 1]))) {
            i++;
            continue;
        }
        size_t b = i;
        while (i < len && ident_char(s[i])) i++;
        size_t n = i - b;
        while (n && s[b + n - 1] == '.') n--;   /* "step." ends a sentence */
        double mult;
        enum field f = classify(s + b, n, &mult);
        if (f == F_NONE || f == F_TIME || f == F_GPU) continue;
        size_t j = i;
        if (j < len && (s[j] == '\'' || s[j] == '"')) j++;   /* a printed dict: {'step': 5} */
        while (j < len && (s[j] == ' ' || s[j] == '\t')) j++;
        if (j < len && (s[j] == '=' || s[j] == ':')) j++;
        while (j < len && (s[j] == ' ' || s[j] == '\t')) j++;
        if (j >= len || !isdigit((unsigned char)s[j])) continue;   /* a word, not a figure */
        double v;
        size_t used;
        if (!field_value(f, s + j, len - j, mult, &v, &used)) {
            if (!r->bad) r->bad = "a figure that cannot be read (too large, or junk)";
            i = j + 1;
            continue;
        }
        if (!r->has[f]) record_set(r, f, v);
        i = j + used;
    }
}

/* ---------- JSON Lines: a bounded scanner, no tree ---------- */

typedef struct jscan {
    const char *p, *end;
    record *r;
    int depth;
} jscan;

static void jws(jscan *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\r' || *j->p == '\n'))
        j->p++;
}

/* A string at j->p (after the quote is checked); its raw bytes, escapes left in place
 * (keys and figures never need them). */
static bool jstring(jscan *j, const char **s, size_t *len)
{
    if (j->p >= j->end || *j->p != '"') return false;
    const char *b = ++j->p;
    while (j->p < j->end && *j->p != '"')
        j->p += *j->p == '\\' && j->end - j->p > 1 ? 2 : 1;
    if (j->p >= j->end) return false;
    *s = b;
    *len = (size_t)(j->p - b);
    j->p++;
    return true;
}

static bool jvalue(jscan *j, enum field f, double mult);

static bool jobject(jscan *j)
{
    j->p++;
    jws(j);
    if (j->p < j->end && *j->p == '}') { j->p++; return true; }
    for (;;) {
        const char *k;
        size_t klen;
        jws(j);
        if (!jstring(j, &k, &klen)) return false;
        jws(j);
        if (j->p >= j->end || *j->p != ':') return false;
        j->p++;
        jws(j);
        double mult;
        enum field f = classify(k, klen, &mult);
        if (!jvalue(j, f, mult)) return false;
        jws(j);
        if (j->p < j->end && *j->p == ',') { j->p++; continue; }
        if (j->p < j->end && *j->p == '}') { j->p++; return true; }
        return false;
    }
}

static bool jarray(jscan *j)
{
    j->p++;
    jws(j);
    if (j->p < j->end && *j->p == ']') { j->p++; return true; }
    for (;;) {
        jws(j);
        if (!jvalue(j, F_NONE, 1)) return false;
        jws(j);
        if (j->p < j->end && *j->p == ',') { j->p++; continue; }
        if (j->p < j->end && *j->p == ']') { j->p++; return true; }
        return false;
    }
}

static bool jvalue(jscan *j, enum field f, double mult)
{
    if (j->p >= j->end) return false;
    char c = *j->p;
    if (c == '{' || c == '[') {
        if (++j->depth > 32) return false;
        bool ok = c == '{' ? jobject(j) : jarray(j);
        j->depth--;
        return ok;
    }
    if (c == '"') {
        const char *s;
        size_t len;
        if (!jstring(j, &s, &len)) return false;
        double v;
        size_t used;
        if (f != F_NONE && !j->r->has[f]) {
            if (field_value(f, s, len, mult, &v, &used)) record_set(j->r, f, v);
            else if (is_memory(f) && !j->r->bad) j->r->bad = "a figure that cannot be read";
        }
        return true;
    }
    if (c == '-' || isdigit((unsigned char)c)) {
        const char *b = j->p;
        while (j->p < j->end && (isdigit((unsigned char)*j->p) || *j->p == '.' || *j->p == '-' ||
                                 *j->p == '+' || *j->p == 'e' || *j->p == 'E'))
            j->p++;
        double v;
        size_t used;
        if (f != F_NONE && !j->r->has[f]) {
            if (*b != '-' && field_value(f, b, (size_t)(j->p - b), mult, &v, &used) &&
                used == (size_t)(j->p - b))
                record_set(j->r, f, v);
            else if (is_memory(f) && !j->r->bad) j->r->bad = "a figure that cannot be read";
        }
        return true;
    }
    static const char *const words[] = {"true", "false", "null"};
    for (size_t w = 0; w < SDP_ARRAY_LEN(words); w++) {
        size_t n = strlen(words[w]);
        if ((size_t)(j->end - j->p) >= n && memcmp(j->p, words[w], n) == 0) {
            j->p += n;
            return true;
        }
    }
    return false;
}

static void parse_jsonl(const char *s, size_t len, record *r)
{
    jscan j = {.p = s, .end = s + len, .r = r, .depth = 0};
    jws(&j);
    if (j.p >= j.end) return;
    if (*j.p != '{' || !jvalue(&j, F_NONE, 1)) {
        memset(r, 0, sizeof *r);
        r->bad = "not a JSON object";
        return;
    }
    jws(&j);
    if (j.p != j.end) {
        memset(r, 0, sizeof *r);
        r->bad = "text after the JSON object";
    }
}

/* ---------- CSV ---------- */

#define MAX_COLUMNS 64

typedef struct csv_header {
    size_t n;
    enum field f[MAX_COLUMNS];
    double mult[MAX_COLUMNS];
} csv_header;

/* The next cell of s[*i..len): trimmed, quotes dropped. */
static void csv_cell(const char *s, size_t len, size_t *i, const char **cell, size_t *clen)
{
    size_t b = *i;
    while (*i < len && s[*i] != ',') (*i)++;
    size_t e = *i;
    if (*i < len) (*i)++;
    while (b < e && (s[b] == ' ' || s[b] == '"')) b++;
    while (e > b && (s[e - 1] == ' ' || s[e - 1] == '"' || s[e - 1] == '\r')) e--;
    *cell = s + b;
    *clen = e - b;
}

/* A header cell: "allocated_mib", or nvidia-smi's "memory.used [MiB]". */
static enum field header_field(const char *c, size_t n, double *mult)
{
    const char *br = memchr(c, '[', n);
    if (!br) return classify(c, n, mult);
    size_t k = (size_t)(br - c);
    while (k && c[k - 1] == ' ') k--;
    enum field f = classify(c, k, mult);
    double one = 1, v;
    size_t used;
    /* "[MiB]": read "1 MiB" */
    char unit[16];
    size_t ul = 0;
    for (const char *p = br + 1; p < c + n && *p != ']' && ul < sizeof unit - 3; p++) unit[ul++] = *p;
    char probe[24];
    int pl = snprintf(probe, sizeof probe, "1 %.*s", (int)ul, unit);
    if (pl > 0 && sdp_curve_parse_figure(probe, (size_t)pl, one, &v, &used)) *mult = v;
    return f;
}

static bool csv_parse_header(const char *s, size_t len, csv_header *h)
{
    memset(h, 0, sizeof *h);
    bool has_x = false, has_mem = false;
    for (size_t i = 0; i < len && h->n < MAX_COLUMNS;) {
        const char *c;
        size_t n;
        csv_cell(s, len, &i, &c, &n);
        h->f[h->n] = header_field(c, n, &h->mult[h->n]);
        has_x |= h->f[h->n] == F_STEP || h->f[h->n] == F_TIME;
        has_mem |= is_memory(h->f[h->n]);
        h->n++;
    }
    return has_x && has_mem;
}

static void parse_csv(const csv_header *h, const char *s, size_t len, record *r)
{
    size_t col = 0, i = 0;
    for (; i < len && col < h->n; col++) {
        const char *c;
        size_t n;
        csv_cell(s, len, &i, &c, &n);
        enum field f = h->f[col];
        if (f == F_NONE) continue;
        double v;
        size_t used;
        if (n == 0) continue;      /* an empty cell: not logged this time */
        if (!field_value(f, c, n, h->mult[col], &v, &used) ||
            (f != F_TIME && used != n)) {
            if (!r->bad) r->bad = "a cell that is not a figure";
            continue;
        }
        record_set(r, f, v);
    }
}

/* ---------- series and samples ---------- */

static sdp_curve_series *find_series(sdp_curve_log *log, size_t file, int64_t rank, int64_t gpu,
                                     sd_error *err)
{
    for (size_t i = log->n_series; i-- > 0;) {
        sdp_curve_series *s = &log->series[i];
        if (s->file == file && s->rank == rank && s->gpu == gpu) return s;
    }
    if (log->n_series >= SDP_CURVE_MAX_SERIES) {
        sdp_fail(err, SD_ELIMIT, SD_NO_OFFSET, "more than %d series (ranks or GPUs)",
                 SDP_CURVE_MAX_SERIES);
        return NULL;
    }
    if (log->n_series == log->cap_series) {
        size_t cap = log->cap_series ? log->cap_series * 2 : 8;
        sdp_curve_series *ns = realloc(log->series, cap * sizeof *ns);
        if (!ns) {
            sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
            return NULL;
        }
        log->series = ns;
        log->cap_series = cap;
    }
    sdp_curve_series *s = &log->series[log->n_series++];
    memset(s, 0, sizeof *s);
    s->file = file;
    s->rank = rank;
    s->gpu = gpu;
    s->stride = 1;
    return s;
}

static void halve(sdp_curve_series *s)
{
    size_t m = 0;
    for (size_t i = 0; i + 1 < s->n; i += 2, m++) {
        s->x[m] = s->x[i];
        s->lo[m] = fmin(s->lo[i], s->lo[i + 1]);
        s->hi[m] = fmax(s->hi[i], s->hi[i + 1]);
        s->gap[m] = fmin(s->gap[i], s->gap[i + 1]);   /* fmin ignores a NaN */
    }
    if (s->n % 2) {
        s->x[m] = s->x[s->n - 1];
        s->lo[m] = s->lo[s->n - 1];
        s->hi[m] = s->hi[s->n - 1];
        s->gap[m] = s->gap[s->n - 1];
        m++;
    }
    s->n = m;
    s->stride *= 2;
}

static sd_status store(sdp_curve_series *s, size_t max_samples, sd_error *err)
{
    if (s->n == s->cap) {
        if (s->cap >= max_samples) {
            halve(s);
        } else {
            size_t cap = s->cap ? s->cap * 2 : 256;
            if (cap > max_samples) cap = max_samples;
            double *arr[4] = {s->x, s->lo, s->hi, s->gap};
            for (int k = 0; k < 4; k++) {
                double *p = realloc(arr[k], cap * sizeof *p);
                if (!p) return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
                arr[k] = p;
            }
            s->x = arr[0]; s->lo = arr[1]; s->hi = arr[2]; s->gap = arr[3];
            s->cap = cap;
        }
    }
    s->x[s->n] = s->pend_x;
    s->lo[s->n] = s->pend_lo;
    s->hi[s->n] = s->pend_hi;
    s->gap[s->n] = s->pend_gap;
    s->n++;
    s->pend_n = 0;
    return SD_OK;
}

static sd_status add_sample(sdp_curve_series *s, size_t max_samples, double x, double v, double gap,
                            sd_error *err)
{
    if (s->pend_n == 0) {
        s->pend_x = x;
        s->pend_lo = s->pend_hi = v;
        s->pend_gap = gap;
    } else {
        s->pend_lo = fmin(s->pend_lo, v);
        s->pend_hi = fmax(s->pend_hi, v);
        s->pend_gap = fmin(s->pend_gap, gap);
    }
    s->n_raw++;
    if (++s->pend_n >= s->stride) return store(s, max_samples, err);
    return SD_OK;
}

void sdp_curve_log_finish(sdp_curve_log *log)
{
    for (size_t i = 0; i < log->n_series; i++) {
        sdp_curve_series *s = &log->series[i];
        if (s->pend_n) store(s, log->max_samples, NULL);
    }
}

void sdp_curve_log_init(sdp_curve_log *log, size_t max_samples)
{
    memset(log, 0, sizeof *log);
    log->max_samples = max_samples >= 16 ? max_samples : SDP_CURVE_DEFAULT_MAX_SAMPLES;
}

void sdp_curve_log_free(sdp_curve_log *log)
{
    for (size_t i = 0; i < log->n_series; i++) {
        free(log->series[i].x);
        free(log->series[i].lo);
        free(log->series[i].hi);
        free(log->series[i].gap);
    }
    free(log->series);
    memset(log, 0, sizeof *log);
}

const char *sdp_curve_format_name(sdp_curve_format f)
{
    switch (f) {
    case SDP_CURVE_TEXT: return "text";
    case SDP_CURVE_JSONL: return "jsonl";
    case SDP_CURVE_CSV: return "csv";
    case SDP_CURVE_NVSMI: return "nvidia-smi";
    case SDP_CURVE_AUTO: break;
    }
    return "auto";
}

/* One record into its series. */
static sd_status take(sdp_curve_log *log, size_t file, const record *r, bool seconds,
                      sdp_curve_format fmt, double *t0, bool *has_t0, bool *took, sd_error *err)
{
    *took = false;
    bool mem = r->has[F_ALLOC] || r->has[F_RESERVED] || r->has[F_USED];
    if (!mem) return SD_OK;
    double x;
    if (seconds) {
        if (!r->has[F_TIME]) return SD_OK;
        if (!*has_t0) { *t0 = r->v[F_TIME]; *has_t0 = true; }
        x = r->v[F_TIME] - *t0;
    } else {
        if (!r->has[F_STEP]) return SD_OK;
        x = r->v[F_STEP];
    }
    int64_t rank = r->has[F_RANK] ? (int64_t)r->v[F_RANK] : -1;
    int64_t gpu = fmt == SDP_CURVE_NVSMI && r->has[F_GPU] ? (int64_t)r->v[F_GPU] : -1;
    sdp_curve_series *s = find_series(log, file, rank, gpu, err);
    if (!s) return err ? err->code : SD_ENOMEM;
    if (s->n_raw == 0) {
        s->axis_seconds = seconds;
        s->measure = r->has[F_ALLOC] ? SDP_CURVE_ALLOCATED
                     : r->has[F_RESERVED] ? SDP_CURVE_RESERVED : SDP_CURVE_USED;
    }
    enum field main = s->measure == SDP_CURVE_ALLOCATED ? F_ALLOC
                      : s->measure == SDP_CURVE_RESERVED ? F_RESERVED : F_USED;
    if (!r->has[main]) return SD_OK;
    double gap = NAN;
    if (r->has[F_RESERVED]) {
        s->has_reserved = true;
        s->reserved_last = r->v[F_RESERVED];
        if (main == F_ALLOC) gap = r->v[F_RESERVED] - r->v[F_ALLOC];
    }
    if (r->has[F_MAX_ALLOC]) { s->has_max_alloc = true; s->max_alloc_last = r->v[F_MAX_ALLOC]; }
    if (r->has[F_RETRIES]) {
        if (!s->has_retries) s->retries_first = r->v[F_RETRIES];
        s->has_retries = true;
        s->retries_last = r->v[F_RETRIES];
    }
    if (r->has[F_OOMS]) {
        if (!s->has_ooms) s->ooms_first = r->v[F_OOMS];
        s->has_ooms = true;
        s->ooms_last = r->v[F_OOMS];
    }
    if (r->has[F_TOTAL]) { s->has_total = true; s->total = fmax(s->total, r->v[F_TOTAL]); }
    *took = true;
    return add_sample(s, log->max_samples, x, r->v[main], gap, err);
}

static bool contains(const char *s, size_t len, const char *word)
{
    size_t k = strlen(word);
    for (size_t i = 0; i + k <= len; i++)
        if (memcmp(s + i, word, k) == 0) return true;
    return false;
}

static bool looks_like_csv_header(const char *s, size_t len, csv_header *h)
{
    if (!memchr(s, ',', len) || memchr(s, '=', len) || memchr(s, '{', len)) return false;
    return csv_parse_header(s, len, h);
}

static gzFile open_input(const char *path, sd_error *err)
{
    gzFile f = NULL;
    if (strcmp(path, "-") == 0) {
        int fd = dup(STDIN_FILENO);
        if (fd >= 0) {
            f = gzdopen(fd, "rb");
            if (!f) close(fd);
        }
    } else {
        f = gzopen(path, "rb");
    }
    if (!f) {
        sdp_fail(err, SD_EIO, SD_NO_OFFSET, "cannot open: %s", strerror(errno ? errno : EIO));
        return NULL;
    }
    gzbuffer(f, 256u << 10);
    return f;
}

typedef struct reader {
    gzFile f;
    char *buf;
    uint64_t line;
    bool eof;
} reader;

/* The next line into r->buf without its newline; *too_long when it did not fit (the rest
 * is skipped). @return false at the end or on a read error (*failed). */
static bool next_line(reader *r, size_t *len, bool *too_long, bool *failed)
{
    *too_long = false;
    *failed = false;
    if (r->eof) return false;
    if (!gzgets(r->f, r->buf, SDP_CURVE_MAX_LINE)) {
        int code;
        gzerror(r->f, &code);
        *failed = code != Z_OK;   /* Z_BUF_ERROR: a gzip stream cut short */
        r->eof = true;
        return false;
    }
    r->line++;
    /* gzgets stops at '\n' or a full buffer; a NUL inside cuts strlen: the line is then
     * binary, and shorter, which only makes it unreadable as figures. */
    size_t n = strlen(r->buf);
    bool nl = n > 0 && r->buf[n - 1] == '\n';
    if (!nl && n + 1 >= SDP_CURVE_MAX_LINE) {
        *too_long = true;
        char skip[4096];
        for (;;) {
            if (!gzgets(r->f, skip, sizeof skip)) { r->eof = true; break; }
            size_t k = strlen(skip);
            if (k && skip[k - 1] == '\n') break;
        }
    }
    if (nl) n--;
    if (n && r->buf[n - 1] == '\r') n--;
    *len = n;
    return true;
}

static const char *looked_for(sdp_curve_format f)
{
    switch (f) {
    case SDP_CURVE_NVSMI:
        return "nvidia-smi CSV rows with timestamp, index and memory.used";
    case SDP_CURVE_CSV:
        return "a CSV header naming a step (step, global_step, iteration, iter) or time column "
               "and a memory column (allocated, reserved, memory_allocated, ..., with a unit "
               "suffix such as _mib)";
    case SDP_CURVE_JSONL:
        return "JSON objects with a step (step, global_step, iteration, iter) and allocated, "
               "memory_allocated, reserved, memory_reserved or allocated_bytes.all.current";
    default: break;
    }
    return "lines with a step (step, global_step, iteration, iter) and a memory figure (alloc, "
           "allocated, mem_alloc, memory_allocated, reserved, memory_reserved)";
}

sd_status sdp_curve_read(sdp_curve_log *log, const char *path, size_t file,
                         sdp_curve_format format, sdp_curve_file_info *info, sd_error *err)
{
    memset(info, 0, sizeof *info);
    reader rd = {0};
    rd.f = open_input(path, err);
    if (!rd.f) return SD_EIO;
    rd.buf = malloc(SDP_CURVE_MAX_LINE);
    if (!rd.buf) {
        gzclose(rd.f);
        return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    }
    csv_header h;
    bool have_header = false, seconds = false, has_t0 = false;
    double t0 = 0;
    sd_status st = SD_OK;
    size_t len;
    bool too_long, failed;
    while (st == SD_OK && next_line(&rd, &len, &too_long, &failed)) {
        const char *s = rd.buf;
        record r;
        memset(&r, 0, sizeof r);
        if (too_long) {
            r.bad = "a line longer than 64 KiB";
        } else {
            size_t b = 0;
            while (b < len && (s[b] == ' ' || s[b] == '\t')) b++;
            if (b == len) continue;
            if (format == SDP_CURVE_AUTO) {
                if (s[b] == '{') format = SDP_CURVE_JSONL;
                else if (looks_like_csv_header(s, len, &h))
                    format = contains(s, len, "memory.used") ? SDP_CURVE_NVSMI : SDP_CURVE_CSV;
                else format = SDP_CURVE_TEXT;
            }
            if ((format == SDP_CURVE_CSV || format == SDP_CURVE_NVSMI) && !have_header) {
                if (!csv_parse_header(s, len, &h)) continue;   /* preamble before the header */
                have_header = true;
                bool has_step = false;
                for (size_t c = 0; c < h.n; c++) has_step |= h.f[c] == F_STEP;
                seconds = !has_step;
                continue;
            }
            if (format == SDP_CURVE_JSONL || (format == SDP_CURVE_TEXT && s[b] == '{'))
                parse_jsonl(s, len, &r);
            else if (format == SDP_CURVE_TEXT) parse_text(s, len, &r);
            else parse_csv(&h, s, len, &r);
            if (r.bad && s[b] == '{') {
                /* not JSON: a printed Python dict ({'step': 5, ...}) reads as text */
                memset(&r, 0, sizeof r);
                parse_text(s, len, &r);
                if (!r.has[F_STEP] && !r.has[F_TIME]) r.bad = "not a JSON object";
            }
        }
        bool took = false;
        if (!r.bad) {
            bool sec = format == SDP_CURVE_JSONL ? !r.has[F_STEP] && r.has[F_TIME] : seconds;
            st = take(log, file, &r, sec, format, &t0, &has_t0, &took, err);
            if (st == SD_OK && !took && format != SDP_CURVE_TEXT &&
                (r.has[F_ALLOC] || r.has[F_RESERVED] || r.has[F_USED]))
                r.bad = "a memory figure without a step or time";
        }
        if (r.bad) {
            if (!info->bad_lines) {
                info->first_bad_line = rd.line;
                info->first_bad_why = r.bad;
            }
            info->bad_lines++;
        }
        info->samples += took;
    }
    if (st == SD_OK && failed)
        st = sdp_fail(err, SD_EIO, SD_NO_OFFSET, "read error after line %llu (a damaged gzip "
                      "stream?)", (unsigned long long)rd.line);
    info->lines = rd.line;
    info->format = format == SDP_CURVE_AUTO ? SDP_CURVE_TEXT : format;
    free(rd.buf);
    gzclose(rd.f);
    if (st == SD_OK && info->samples == 0)
        st = sdp_fail(err, SD_ESNAPSHOT, SD_NO_OFFSET, "no memory figure in %llu lines; "
                      "looked for %s", (unsigned long long)info->lines, looked_for(info->format));
    if (st != SD_OK && err) sdp_error_set_source(err, path);
    return st;
}
