/* log_read.c - memory figures from training logs, streamed (log_read.h).
 *
 * One line at a time through zlib's gzgets (plain files pass through unchanged), a
 * fixed line buffer, and per series a sample store that halves itself when full: the
 * memory used does not depend on the log's length. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <unistd.h>
#include <zlib.h>

#include "base/base.h"
#include "logs/log_line.h"
#include "logs/log_read.h"

/* ---------- the fields a log may name ---------- */

#define field sdp_field
#define record sdp_log_record
#define record_set sdp_record_set
#define parse_number sdp_parse_number
#define parse_timestamp sdp_parse_timestamp

static const struct { const char *name; enum field f; } field_names[] = {
    {"step", F_STEP}, {"global_step", F_STEP}, {"iteration", F_STEP}, {"iter", F_STEP},
    {"time", F_TIME}, {"timestamp", F_TIME}, {"_timestamp", F_TIME}, {"rank", F_RANK},
    {"gpu", F_GPU}, {"index", F_GPU},
    {"alloc", F_ALLOC}, {"allocated", F_ALLOC}, {"mem_alloc", F_ALLOC},
    {"memory_allocated", F_ALLOC}, {"allocated_bytes.all.current", F_ALLOC},
    {"reserved", F_RESERVED}, {"memory_reserved", F_RESERVED}, {"mem_reserved", F_RESERVED},
    {"reserved_bytes.all.current", F_RESERVED},
    {"max_memory_allocated", F_MAX_ALLOC}, {"max_allocated", F_MAX_ALLOC},
    {"allocated_bytes.all.peak", F_MAX_ALLOC},
    {"max_memory_reserved", F_MAX_RESERVED}, {"max_reserved", F_MAX_RESERVED},
    {"reserved_bytes.all.peak", F_MAX_RESERVED},
    /* DeepSpeed's ThroughputTimer (deepspeed/utils/timer.py): GB are 2^30 bytes */
    {"MemAllocated", F_ALLOC}, {"MaxMemAllocated", F_MAX_ALLOC},
    {"num_alloc_retries", F_RETRIES}, {"num_ooms", F_OOMS},
    {"memory.used", F_USED}, {"memory.free", F_FREE}, {"memory.total", F_TOTAL},
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

static bool is_memory(enum field f)
{
    return f == F_ALLOC || f == F_RESERVED || f == F_MAX_ALLOC || f == F_MAX_RESERVED ||
           f == F_USED || f == F_FREE;
}

static bool has_memory(const record *r)
{
    for (enum field f = F_ALLOC; f < F_COUNT; f++)
        if (r->has[f] && is_memory(f)) return true;
    return false;
}

/* ---------- numbers and units ---------- */

#define MAX_BYTES 4611686018427387904.0   /* 2^62 */

/* A comma at s[n] that groups thousands: three digits after it and no fourth, and no
 * point yet (3,090 tokens per second; never a list "10,20"). */
static bool thousands_comma(const char *s, size_t len, size_t n, bool point)
{
    return !point && n + 3 < len + 0 && s[n] == ',' && isdigit((unsigned char)s[n + 1]) &&
           isdigit((unsigned char)s[n + 2]) && isdigit((unsigned char)s[n + 3]) &&
           (n + 4 >= len || !isdigit((unsigned char)s[n + 4]));
}

/* A decimal number at s (digits, one point, an exponent; "," grouping thousands). */
bool parse_number(const char *s, size_t len, double *out, size_t *used)
{
    char buf[64];
    size_t n = 0, k = 0;
    bool point = false;
    while (n < len && k < sizeof buf - 1) {
        char c = s[n];
        if (isdigit((unsigned char)c) || c == '.' ||
            ((c == 'e' || c == 'E') && n > 0 && n + 1 < len &&
             (isdigit((unsigned char)s[n + 1]) || s[n + 1] == '+' || s[n + 1] == '-')) ||
            ((c == '+' || c == '-') && n > 0 && (s[n - 1] == 'e' || s[n - 1] == 'E'))) {
            point |= c == '.' || c == 'e' || c == 'E';
            buf[k++] = c;
            n++;
        } else if (n > 0 && thousands_comma(s, len, n, point)) {
            n++;                                  /* the separator is not copied */
        } else {
            break;
        }
    }
    if (k == 0 || k >= sizeof buf - 1 || !isdigit((unsigned char)s[0])) return false;
    buf[k] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (end == buf || !isfinite(v) || v < 0) return false;
    /* characters of s consumed: the copied ones strtod took, plus the separators among them */
    size_t took = (size_t)(end - buf), m = 0;
    for (size_t c = 0; c < took; m++)
        if (s[m] != ',') c++;
    *out = v;
    *used = m;
    return true;
}

bool sdp_log_parse_figure(const char *s, size_t len, double mult, double *out, size_t *used)
{
    static const struct { const char *unit; double mult; } units[] = {
        {"b", 1}, {"bytes", 1}, {"k", 1024.0}, {"kb", 1024.0}, {"kib", 1024.0},
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

const char *sdp_find_word(const char *s, size_t len, const char *word)
{
    size_t k = strlen(word);
    if (!k || len < k) return NULL;
    for (const char *p = s, *end = s + len - k + 1; p < end;) {
        const char *q = memchr(p, word[0], (size_t)(end - p));
        if (!q) return NULL;
        if (memcmp(q, word, k) == 0 &&
            (q == s || !(isalnum((unsigned char)q[-1]) || q[-1] == '_')))
            return q;
        p = q + 1;
    }
    return NULL;
}

bool sdp_figure_at(const char *s, size_t len, const char *at, double mult, bool need_unit,
                   double *out)
{
    size_t off = (size_t)(at - s);
    while (off < len && (s[off] == ' ' || s[off] == '\t')) off++;
    double v;
    size_t k;
    if (off >= len || !parse_number(s + off, len - off, &v, &k)) return false;
    size_t j = off + k;
    while (j < len && s[j] == ' ') j++;
    if (need_unit && !(j < len && isalpha((unsigned char)s[j]))) return false;
    size_t used;
    if (!sdp_log_parse_figure(s + off, len - off, mult, out, &used)) return false;
    return !need_unit || used > k;   /* a word after the number that is no unit: no figure */
}

/* ---------- one record's figures ---------- */

void record_set(record *r, enum field f, double v)
{
    if (f == F_NONE) return;
    r->has[f] = true;
    r->v[f] = v;
}

/* ctime's "Fri Dec  4 10:18:58 2026" (nvidia-smi's table) into its numbers. */
static bool parse_ctime(const char *buf, int *y, int *mo, int *d, int *h, int *mi, double *sec)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    char wd[4], mon[4];
    if (sscanf(buf, " %3s %3s %d %d:%d:%lf %d", wd, mon, d, h, mi, sec, y) != 7) return false;
    const char *m = strstr(months, mon);
    if (!m || strlen(mon) != 3 || (m - months) % 3) return false;
    *mo = (int)(m - months) / 3 + 1;
    return true;
}

bool parse_timestamp(const char *s, size_t len, double *out)
{
    char buf[64];
    if (len >= sizeof buf) return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    int y, mo, d, h, mi;
    double sec;
    char sep1, sep2, t;
    int ymd;
    if (sscanf(buf, " %d%c%d%c%d%c%d:%d:%lf", &y, &sep1, &mo, &sep2, &d, &t, &h, &mi, &sec) == 9) {
        /* 2024/05/01 12:00:00 */
    } else if (sscanf(buf, " %8d %d:%d:%lf", &ymd, &h, &mi, &sec) == 4 && ymd > 19700000) {
        y = ymd / 10000, mo = ymd / 100 % 100, d = ymd % 100;   /* dmon -o DT: 20240501 */
    } else if (!parse_ctime(buf, &y, &mo, &d, &h, &mi, &sec)) {
        return false;
    }
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
    return sdp_log_parse_figure(s, len, mult, out, used);
}

/* ---------- text lines: key=value, key: value, key value ---------- */

static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '.'; }

/* Host memory named just before a memory field ("CPU mem allocated", "host_reserved",
 * "RSS"): never GPU memory. */
static bool host_memory_before(const char *s, size_t at)
{
    static const char *const words[] = {"cpu", "host", "rss", "ram", "virtual"};
    size_t b = at > 16 ? at - 16 : 0;
    for (size_t i = b; i < at; i++) {
        char c = (char)tolower((unsigned char)s[i]);
        if (c != 'c' && c != 'h' && c != 'r' && c != 'v') continue;   /* no word starts here */
        for (size_t w = 0; w < SDP_ARRAY_LEN(words); w++) {
            size_t k = strlen(words[w]);
            if (i + k <= at && strncasecmp(s + i, words[w], k) == 0 &&
                (i == 0 || !isalpha((unsigned char)s[i - 1])))
                return true;
        }
    }
    return false;
}

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
        if (is_memory(f) && host_memory_before(s, b)) continue;
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

/* A JSON key as metrics loggers write it: "memory/max_reserved(GiB)" (torchtitan's
 * TensorBoard and wandb keys), "train/memory_allocated_mib": the part after the last '/',
 * a unit in parentheses at its end. */
static enum field classify_key(const char *k, size_t n, double *mult)
{
    enum field f = classify(k, n, mult);
    if (f != F_NONE) return f;
    const char *slash = NULL;
    for (size_t i = 0; i < n; i++)
        if (k[i] == '/') slash = k + i;
    if (slash) {
        n -= (size_t)(slash + 1 - k);
        k = slash + 1;
    }
    const char *open = n && k[n - 1] == ')' ? memchr(k, '(', n) : NULL;
    if (!open) return slash ? classify(k, n, mult) : F_NONE;
    int ul = (int)(k + n - 1 - (open + 1));
    char probe[24];
    int pl = snprintf(probe, sizeof probe, "1 %.*s", ul < 16 ? ul : 16, open + 1);
    double unit;
    size_t used;
    f = classify(k, (size_t)(open - k), mult);
    /* "max_reserved(%)" is no byte figure: only a byte unit in the parentheses reads */
    if (!is_memory(f) || pl <= 0 || !sdp_log_parse_figure(probe, (size_t)pl, 1, &unit, &used) ||
        used != (size_t)pl)
        return F_NONE;
    *mult = unit;
    return f;
}

/* wandb's system metrics (wandb/sdk/internal/system/assets/gpu.py): "system.gpu.N.
 * memoryAllocatedBytes" is NVML's memory used of GPU N (device_used); "system.gpu.N.
 * memoryAllocated" the same as a percentage of its total. @return true when k is one. */
static bool wandb_gpu_key(jscan *j, const char *k, size_t n)
{
    static const char pre[] = "system.gpu.";
    size_t p = sizeof pre - 1;
    if (n <= p || memcmp(k, pre, p) != 0 || !isdigit((unsigned char)k[p])) return false;
    size_t d = p;
    while (d < n && isdigit((unsigned char)k[d])) d++;
    long gpu = strtol(k + p, NULL, 10);
    if (d >= n || k[d] != '.' || gpu >= 16) return false;
    const char *rest = k + d + 1;
    size_t rn = n - d - 1;
    bool bytes = rn == 20 && memcmp(rest, "memoryAllocatedBytes", 20) == 0;
    bool pct = rn == 15 && memcmp(rest, "memoryAllocated", 15) == 0;
    if (!bytes && !pct) return false;
    const char *b = j->p, *e = j->p;   /* the value is only looked at: jvalue reads past it */
    while (e < j->end && (isdigit((unsigned char)*e) || *e == '.' || *e == 'e' || *e == 'E' ||
                          *e == '+' || *e == '-'))
        e++;
    double v;
    size_t used;
    record *r = j->r;
    if (bytes && e > b && parse_number(b, (size_t)(e - b), &v, &used) && v < MAX_BYTES) {
        if (r->gpus <= gpu)
            for (int g = r->gpus; g <= gpu; g++) r->gpu_used[g] = NAN;
        if (r->gpus <= gpu) r->gpus = (int)gpu + 1;
        r->gpu_used[gpu] = v;
    } else if (pct) {
        r->gpu_percent_only = true;
    }
    return true;
}

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
        enum field f = j->depth == 1 && wandb_gpu_key(j, k, klen) ? F_NONE
                       : classify_key(k, klen, &mult);
        if (!jvalue(j, f, f == F_NONE ? 1 : mult)) return false;
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

/* The next cell of s[*i..len): trimmed, quotes dropped. A comma inside quotes is the
 * cell's, as is a newline (a record joined by csv_join). */
static void csv_cell(const char *s, size_t len, size_t *i, const char **cell, size_t *clen)
{
    size_t b = *i;
    bool quoted = false;
    for (; *i < len && (quoted || s[*i] != ','); (*i)++) quoted ^= s[*i] == '"';
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
    if (pl > 0 && sdp_log_parse_figure(probe, (size_t)pl, one, &v, &used)) *mult = v;
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

/* A new series for (file, rank, gpu), numbered run. */
static sdp_log_series *new_series(sdp_log *log, size_t file, int64_t rank, int64_t gpu,
                                    int64_t run, sd_error *err)
{
    if (log->n_series >= SDP_LOG_MAX_SERIES) {
        sdp_fail(err, SD_ELIMIT, SD_NO_OFFSET, "more than %d series (ranks, GPUs or runs)",
                 SDP_LOG_MAX_SERIES);
        return NULL;
    }
    if (log->n_series == log->cap_series) {
        size_t cap = log->cap_series ? log->cap_series * 2 : 8;
        sdp_log_series *ns = realloc(log->series, cap * sizeof *ns);
        if (!ns) {
            sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
            return NULL;
        }
        log->series = ns;
        log->cap_series = cap;
    }
    sdp_log_series *s = &log->series[log->n_series++];
    memset(s, 0, sizeof *s);
    s->file = file;
    s->rank = rank;
    s->gpu = gpu;
    s->run = run;
    s->stride = 1;
    return s;
}

/* The latest run of (file, rank, gpu), made when there is none. */
static sdp_log_series *find_series(sdp_log *log, size_t file, int64_t rank, int64_t gpu,
                                     sd_error *err)
{
    for (size_t i = log->n_series; i-- > 0;) {
        sdp_log_series *s = &log->series[i];
        if (s->file == file && s->rank == rank && s->gpu == gpu) return s;
    }
    return new_series(log, file, rank, gpu, 0, err);
}

static void halve(sdp_log_series *s)
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

static sd_status store(sdp_log_series *s, size_t max_samples, sd_error *err)
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

static sd_status add_sample(sdp_log_series *s, size_t max_samples, double x, double v, double gap,
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

void sdp_log_finish(sdp_log *log)
{
    for (size_t i = 0; i < log->n_series; i++) {
        sdp_log_series *s = &log->series[i];
        if (s->pend_n) store(s, log->max_samples, NULL);
    }
}

void sdp_log_init(sdp_log *log, size_t max_samples)
{
    memset(log, 0, sizeof *log);
    log->max_samples = max_samples >= 16 ? max_samples : SDP_LOG_DEFAULT_MAX_SAMPLES;
}

void sdp_log_free(sdp_log *log)
{
    for (size_t i = 0; i < log->n_series; i++) {
        free(log->series[i].x);
        free(log->series[i].lo);
        free(log->series[i].hi);
        free(log->series[i].gap);
    }
    free(log->series);
    free(log->ooms);
    memset(log, 0, sizeof *log);
}

const char *sdp_log_format_name(sdp_log_format f)
{
    switch (f) {
    case SDP_LOG_TEXT: return "text";
    case SDP_LOG_JSONL: return "jsonl";
    case SDP_LOG_CSV: return "csv";
    case SDP_LOG_NVSMI: return "nvidia-smi";
    case SDP_LOG_AUTO: break;
    }
    return "auto";
}

const char *sdp_log_measure_name(sdp_log_measure m)
{
    static const char *const names[] = {"allocated", "reserved", "max_allocated",
                                        "max_reserved", "device_used", "device_free"};
    return (size_t)m < SDP_ARRAY_LEN(names) ? names[m] : "allocated";
}

/* The field each measure reads, in the order a series picks its measure. */
static const enum field measure_field[] = {F_ALLOC, F_RESERVED, F_MAX_ALLOC, F_MAX_RESERVED,
                                           F_USED, F_FREE};

typedef struct user_pattern user_pattern;   /* --pattern, below */

/* What one file's reading remembers. */
typedef struct file_ctx {
    size_t file;
    sdp_log_format format;
    bool seconds;                 /* CSV: time is the x */
    bool has_t0;
    double t0;
    const sdp_log_preset *preset;   /* the framework's format, once a line of it gave a figure */
    sdp_preset_state st;
    bool claimed;                 /* a preset claimed some line */
    bool generic;                 /* key=value text gave a sample: no preset is tried again */
    const user_pattern *pattern;  /* --pattern: only its lines are read */
    bool wandb;                   /* wandb's system.gpu.N lines were read */
    const char *claimed_why;      /* ...that gave no figure: why (none_why) */
} file_ctx;

/* One record into its series. A step lower than the series' last starts a new run (a
 * restart, or a resume from an earlier checkpoint). */
static sd_status take(sdp_log *log, file_ctx *fc, record *r, sdp_log_axis axis,
                      int64_t prefix_rank, bool *took, sd_error *err)
{
    *took = false;
    if (r->has[F_FREE] && r->has[F_TOTAL] && !r->has[F_USED] && r->v[F_TOTAL] >= r->v[F_FREE])
        record_set(r, F_USED, r->v[F_TOTAL] - r->v[F_FREE]);   /* used only when the total is known */
    if (!has_memory(r)) return SD_OK;
    double x = 0;
    if (axis == SDP_AXIS_SECOND) {
        if (!r->has[F_TIME]) return SD_OK;
        if (!fc->has_t0) { fc->t0 = r->v[F_TIME]; fc->has_t0 = true; }
        x = r->v[F_TIME] - fc->t0;
    } else if (axis == SDP_AXIS_STEP) {
        if (!r->has[F_STEP]) return SD_OK;
        x = r->v[F_STEP];
    }
    int64_t rank = r->has[F_RANK] ? (int64_t)r->v[F_RANK] : prefix_rank;
    int64_t gpu = r->has[F_GPU] && (fc->format == SDP_LOG_NVSMI || fc->preset || fc->pattern ||
                                    r->per_gpu)
                  ? (int64_t)r->v[F_GPU] : -1;
    sdp_log_series *s = find_series(log, fc->file, rank, gpu, err);
    if (!s) return err ? err->code : SD_ENOMEM;
    if (axis == SDP_AXIS_STEP && s->n_raw && x < s->last_x && s->run + 1 < SDP_LOG_MAX_RUNS &&
        s->axis == axis && r->has[measure_field[s->measure]]) {   /* a new run gets this sample */
        /* the step went back: a restart, or a resume from an earlier checkpoint */
        sdp_log_measure m = s->measure;
        s = new_series(log, fc->file, rank, gpu, s->run + 1, err);
        if (!s) return err ? err->code : SD_ENOMEM;
        s->axis = axis;
        s->measure = m;
    }
    if (s->n_raw == 0) {
        s->axis = axis;
        s->measure = SDP_LOG_ALLOCATED;
        for (size_t m = 0; m < SDP_ARRAY_LEN(measure_field); m++)
            if (r->has[measure_field[m]]) { s->measure = (sdp_log_measure)m; break; }
    }
    if (s->axis != axis) return SD_OK;
    enum field main = measure_field[s->measure];
    if (!r->has[main]) return SD_OK;
    if (axis == SDP_AXIS_SAMPLE) x = (double)s->n_raw;
    s->last_x = fmax(s->last_x, x);
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
    if (!k || len < k) return false;
    for (const char *p = s, *end = s + len - k + 1; p < end; p++) {
        p = memchr(p, word[0], (size_t)(end - p));
        if (!p) return false;
        if (memcmp(p, word, k) == 0) return true;
    }
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

/* ---------- lines as they come ---------- */

#define READ_BLOCK (256u << 10)

typedef struct reader {
    gzFile f;
    char *buf;                /* the line, SDP_LOG_MAX_LINE bytes */
    char *join;               /* a CSV record of several lines (csv_join), or NULL */
    char *blk;                /* what gzread gave, READ_BLOCK bytes */
    size_t blk_len, blk_pos;
    uint64_t line;
    bool eof, failed;
} reader;

static bool refill(reader *r)
{
    if (r->eof) return false;
    int n = gzread(r->f, r->blk, READ_BLOCK);
    if (n <= 0) {
        int code = Z_OK;
        gzerror(r->f, &code);
        r->failed = n < 0 || (code != Z_OK && code != Z_STREAM_END);   /* a gzip stream cut short */
        r->eof = true;
        return false;
    }
    r->blk_len = (size_t)n;
    r->blk_pos = 0;
    return true;
}

/* The next line into r->buf without its newline (NUL bytes kept: clean_line drops them);
 * *too_long when it did not fit (the rest is skipped), *cut when it ends the input without
 * a newline. @return false at the end. */
static bool next_line(reader *r, size_t *len, bool *too_long, bool *cut)
{
    size_t n = 0;
    bool nl = false;
    *too_long = false;
    for (;;) {
        if (r->blk_pos == r->blk_len && !refill(r)) break;
        const char *p = r->blk + r->blk_pos;
        size_t avail = r->blk_len - r->blk_pos;
        const char *e = memchr(p, '\n', avail);
        size_t part = e ? (size_t)(e - p) : avail;
        size_t room = SDP_LOG_MAX_LINE - 1 - n;
        size_t c = part < room ? part : room;
        memcpy(r->buf + n, p, c);
        n += c;
        *too_long |= part > room;
        r->blk_pos += part + (e ? 1 : 0);
        if (e) { nl = true; break; }
    }
    if (!nl && n == 0 && !*too_long) return false;
    r->line++;
    *cut = !nl;
    if (n && r->buf[n - 1] == '\r') n--;
    r->buf[n] = '\0';
    *len = n;
    return true;
}

/* Whether a quoted CSV field is still open after s[0..len), given whether it was before
 * (RFC 4180: "" inside quotes is a quote, and toggles twice). */
static bool csv_quote_open(const char *s, size_t len, bool open)
{
    for (size_t i = 0; i < len; i++) open ^= s[i] == '"';
    return open;
}

static size_t clean_line(char *s, size_t n);

/* A CSV record whose quoted field spans lines is one record: the lines after s[0..*len)
 * are read and joined to it, newlines kept, until the quote closes. @return the record
 * (in rd->join; *len its length), or NULL with *why when it cannot be whole: it never
 * closes, or it grows past a line's limit (a stray quote: the lines after the one that
 * went past are read as lines again, so one quote cannot swallow the file). */
static char *csv_join(reader *rd, const char *s, size_t *len, bool *cut, const char **why)
{
    if (!rd->join && !(rd->join = malloc(SDP_LOG_MAX_LINE))) {
        *why = "out of memory joining a quoted CSV field";
        return NULL;
    }
    size_t n = *len;
    memcpy(rd->join, s, n);
    bool open = true;
    *why = NULL;
    while (open) {
        size_t l;
        bool too_long;
        if (!next_line(rd, &l, &too_long, cut)) {
            *why = "a quoted CSV field that never closes (cut short?)";
            return NULL;
        }
        l = clean_line(rd->buf, l);
        if (too_long || n + 1 + l >= SDP_LOG_MAX_LINE) {
            *why = "a quoted CSV field longer than 64 KiB (a stray quote?)";
            return NULL;
        }
        open = csv_quote_open(rd->buf, l, open);
        rd->join[n++] = '\n';
        memcpy(rd->join + n, rd->buf, l);
        n += l;
    }
    rd->join[n] = '\0';
    *len = n;
    return rd->join;
}

/* Drop what a terminal would not show: ANSI escape sequences (colours, 24-bit ones too,
 * cursor moves, OSC titles) and NUL padding. In place; @return the new length. */
static size_t clean_line(char *s, size_t n)
{
    if (!memchr(s, 0x1b, n) && !memchr(s, 0, n)) return n;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0) { i++; continue; }
        if (c != 0x1b) { s[o++] = s[i++]; continue; }
        i++;
        if (i < n && s[i] == '[') {                 /* CSI: parameters, then one final byte */
            i++;
            while (i < n && ((unsigned char)s[i] < 0x40 || (unsigned char)s[i] > 0x7e)) i++;
            if (i < n) i++;
        } else if (i < n && s[i] == ']') {          /* OSC: up to BEL or ESC \ */
            while (i < n && s[i] != '\a' && !(s[i] == 0x1b && i + 1 < n && s[i + 1] == '\\')) i++;
            i += i < n && s[i] == '\a' ? 1 : 2;
        } else if (i < n) {
            i++;                                    /* a two-byte escape */
        }
    }
    s[o] = '\0';
    return o;
}

/* "[rank3]:" (torchrun), "[default3]:" / "[default 3]:" (torchrun's local rank), "[Rank 3]"
 * (Megatron-LM), "[RANK 03]" anywhere, and srun -l's "  3: " task prefix. An explicit rank
 * wins over torchrun's local one, which wins over srun's task. *skip: the leading prefixes'
 * length. @return the rank, or -1. */
static int64_t rank_prefix(const char *s, size_t len, size_t *skip)
{
    int64_t task = -1, local = -1, rank = -1;
    size_t p = 0;
    while (p < len && s[p] == ' ') p++;
    size_t d = p;
    while (d < len && d - p < 6 && isdigit((unsigned char)s[d])) d++;
    if (d > p && d + 1 < len && s[d] == ':' && s[d + 1] == ' ') {
        task = strtoll(s + p, NULL, 10);
        p = d + 2;
    } else {
        p = 0;
    }
    for (;;) {
        size_t q = p;
        while (q < len && s[q] == ' ') q++;
        if (q >= len || s[q] != '[') break;
        bool is_rank = len - q > 5 && strncasecmp(s + q, "[rank", 5) == 0;
        bool is_default = len - q > 8 && strncmp(s + q, "[default", 8) == 0;
        if (!is_rank && !is_default) break;
        size_t k = q + (is_rank ? 5 : 8);
        if (k < len && s[k] == ' ') k++;
        size_t b = k;
        while (k < len && isdigit((unsigned char)s[k])) k++;
        if (k == b || k >= len || s[k] != ']') break;
        int64_t v = strtoll(s + b, NULL, 10);
        if (is_rank) rank = v;
        else local = v;
        p = k + 1;
        if (p < len && s[p] == ':') p++;
    }
    *skip = p;
    if (rank < 0) {
        /* Megatron's "[Rank N]" after a time stamp or a logger's prefix */
        for (const char *q = memchr(s + p, '[', len - p); q; q = memchr(q + 1, '[', (size_t)(s + len - q - 1))) {
            size_t i = (size_t)(q - s);
            if (len - i > 6 && strncasecmp(q, "[rank ", 6) == 0 && isdigit((unsigned char)q[6])) {
                char *end;
                long long v = strtoll(q + 6, &end, 10);
                if (*end == ']') { rank = v; break; }
            }
            if (i + 1 >= len) break;
        }
    }
    return rank >= 0 ? rank : local >= 0 ? local : task;
}

/* ---------- out-of-memory errors in the text ---------- */

/* The figure that ends just before s[at] ("75.30 GiB is allocated"): back over spaces, a
 * unit and the number. */
static bool figure_before(const char *s, size_t at, double *out)
{
    size_t i = at;
    while (i && s[i - 1] == ' ') i--;
    while (i && isalpha((unsigned char)s[i - 1])) i--;
    while (i && s[i - 1] == ' ') i--;
    size_t e = i;
    while (i && (isdigit((unsigned char)s[i - 1]) || s[i - 1] == '.')) i--;
    if (i == e) return false;
    return sdp_figure_at(s, at, s + i, 1, true, out);
}

static double oom_after(const char *s, size_t len, const char *phrase)
{
    const char *p = sdp_find_word(s, len, phrase);
    double v;
    if (p && sdp_figure_at(s, len, p + strlen(phrase), 1, true, &v)) return v;
    return NAN;
}

static double oom_before(const char *s, size_t len, const char *phrase)
{
    const char *p = sdp_find_word(s, len, phrase);
    double v;
    if (p && figure_before(s, (size_t)(p - s), &v)) return v;
    return NAN;
}

/* torch's two messages (c10/cuda/CUDACachingAllocator.cpp, before and after torch 2.1):
 *   CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB
 *   of which 1.04 GiB is free. Including non-PyTorch memory, this process has 78.10 GiB
 *   memory in use. Of the allocated memory 75.30 GiB is allocated by PyTorch, and 1.80 GiB
 *   is reserved by PyTorch but unallocated. ...
 *   CUDA out of memory. Tried to allocate 50.00 MiB (GPU 0; 22.38 GiB total capacity;
 *   22.18 GiB already allocated; 16.81 MiB free; 22.20 GiB reserved in total by PyTorch)
 * and HIP's and XPU's alike; "CUDA error: out of memory" from a kernel or cuBLAS. */
static bool oom_line(const char *s, size_t len, sdp_log_oom *o)
{
    static const char *const kinds[] = {"CUDA", "HIP", "XPU"};
    const char *at = NULL;
    o->kind = NULL;
    for (size_t k = 0; k < SDP_ARRAY_LEN(kinds) && !at; k++) {
        char a[32], b[32];
        snprintf(a, sizeof a, "%s out of memory", kinds[k]);
        snprintf(b, sizeof b, "%s error: out of memory", kinds[k]);
        if ((at = sdp_find_word(s, len, a)) || (at = sdp_find_word(s, len, b))) o->kind = kinds[k];
    }
    if (!at && (at = sdp_find_word(s, len, "OutOfMemoryError:"))) o->kind = "device";
    if (!at) return false;
    size_t off = (size_t)(at - s);
    s += off;
    len -= off;
    o->gpu = -1;
    const char *g = sdp_find_word(s, len, "GPU ");
    if (g && isdigit((unsigned char)g[4])) o->gpu = strtoll(g + 4, NULL, 10);
    o->tried = oom_after(s, len, "Tried to allocate ");
    o->capacity = oom_after(s, len, "total capacity of ");
    if (isnan(o->capacity)) o->capacity = oom_after(s, len, "total capacty of ");   /* torch < 2.2's typo */
    if (isnan(o->capacity)) o->capacity = oom_before(s, len, "total capacity;");
    o->free = oom_after(s, len, "of which ");
    if (isnan(o->free)) o->free = oom_before(s, len, "free;");
    o->in_use = oom_after(s, len, "this process has ");
    o->allocated = oom_before(s, len, "is allocated by PyTorch");
    if (isnan(o->allocated)) o->allocated = oom_before(s, len, "already allocated");
    o->reserved_unallocated = oom_before(s, len, "is reserved by PyTorch but unallocated");
    double reserved = oom_before(s, len, "reserved in total by PyTorch");
    if (isnan(o->reserved_unallocated) && !isnan(reserved) && !isnan(o->allocated))
        o->reserved_unallocated = fmax(0, reserved - o->allocated);
    return true;
}

static bool same_figure(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

/* One OOM per error: the same message again (a traceback printed twice, torchrun's
 * summary) is not a second one. */
static void note_oom(sdp_log *log, const sdp_log_oom *o)
{
    for (size_t i = 0; i < log->n_ooms; i++) {
        const sdp_log_oom *p = &log->ooms[i];
        if (p->file == o->file && p->rank == o->rank && p->line + 200 > o->line &&
            same_figure(p->tried, o->tried) && same_figure(p->free, o->free))
            return;
    }
    log->ooms_seen++;
    if (log->n_ooms >= SDP_LOG_MAX_OOMS) return;
    if (!log->ooms) {
        log->ooms = malloc(SDP_LOG_MAX_OOMS * sizeof *log->ooms);
        if (!log->ooms) return;   /* the count stays right */
    }
    log->ooms[log->n_ooms++] = *o;
}

/* ---------- --pattern: a regular expression with named groups ---------- */

#define PATTERN_GROUPS SDP_REGEX_GROUPS

typedef struct user_pattern {
    sdp_named_regex nr;                 /* re: the expression; its groups' names */
    size_t n_groups;
    enum field f[PATTERN_GROUPS + 1];   /* per capturing group (1-based); F_NONE: unnamed */
    int unit_group;                     /* the (?<unit>...) group, or 0 */
} user_pattern;

static enum field pattern_field(const char *name, bool *unit)
{
    static const struct { const char *name; enum field f; } names[] = {
        {"step", F_STEP}, {"time", F_TIME}, {"rank", F_RANK}, {"gpu", F_GPU},
        {"allocated", F_ALLOC}, {"reserved", F_RESERVED}, {"max_allocated", F_MAX_ALLOC},
        {"max_reserved", F_MAX_RESERVED}, {"used", F_USED}, {"free", F_FREE}, {"total", F_TOTAL},
    };
    *unit = strcmp(name, "unit") == 0;
    for (size_t i = 0; i < SDP_ARRAY_LEN(names); i++)
        if (strcmp(names[i].name, name) == 0) return names[i].f;
    return F_NONE;
}

/* The named groups (base.h: sdp_named_regex) as the fields they give. */
static sd_status pattern_compile(const char *pat, user_pattern *up, sd_error *err)
{
    memset(up, 0, sizeof *up);
    sd_status st = sdp_named_regex_compile(pat, "--pattern", &up->nr, err);
    if (st != SD_OK) return st;
    up->n_groups = up->nr.n_groups;
    bool has_memory = false;
    for (size_t g = 1; g <= up->n_groups; g++) {
        const char *name = up->nr.name[g];
        if (!name[0]) continue;
        bool unit;
        enum field f = pattern_field(name, &unit);
        if (f == F_NONE && !unit) {
            regfree(&up->nr.re);
            return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "--pattern: unknown group name "
                            "'%s' (step, time, rank, gpu, allocated, reserved, "
                            "max_allocated, max_reserved, used, free, total, unit)", name);
        }
        up->f[g] = f;
        if (unit) up->unit_group = (int)g;
        has_memory |= is_memory(f);
    }
    if (!has_memory) {
        regfree(&up->nr.re);
        return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "--pattern: no memory group (name one "
                        "allocated, reserved, max_allocated, max_reserved, used or free)");
    }
    return SD_OK;
}

/* A line through the pattern: its named groups into r. @return false when it does not
 * match (the line is not the pattern's: skipped, not bad). */
static bool pattern_read(const user_pattern *up, const char *s, record *r)
{
    regmatch_t m[PATTERN_GROUPS + 1];
    if (regexec(&up->nr.re, s, up->n_groups + 1, m, 0) != 0) return false;
    double mult = 1;
    if (up->unit_group && m[up->unit_group].rm_so >= 0) {
        char probe[40];
        int n = (int)(m[up->unit_group].rm_eo - m[up->unit_group].rm_so);
        int pl = snprintf(probe, sizeof probe, "1 %.*s", n < 30 ? n : 30, s + m[up->unit_group].rm_so);
        double v;
        size_t used;
        if (pl > 0 && sdp_log_parse_figure(probe, (size_t)pl, 1, &v, &used) && used == (size_t)pl)
            mult = v;
        else
            r->bad = "--pattern: a unit that is not one (B, KiB, MB, GiB...)";
    }
    for (size_t g = 1; g <= up->n_groups; g++) {
        if (up->f[g] == F_NONE || m[g].rm_so < 0) continue;
        const char *v = s + m[g].rm_so;
        size_t n = (size_t)(m[g].rm_eo - m[g].rm_so), used;
        double x;
        if (!field_value(up->f[g], v, n, mult, &x, &used) || (up->f[g] != F_TIME && used != n)) {
            if (!r->bad) r->bad = "--pattern: a group that is not a figure";
            continue;
        }
        record_set(r, up->f[g], x);
    }
    if (!r->has[F_STEP] && !r->has[F_TIME]) r->by_sample = true;
    return true;
}

/* ---------- the reader ---------- */

static const char *looked_for(sdp_log_format f)
{
    switch (f) {
    case SDP_LOG_NVSMI:
        return "nvidia-smi CSV rows with timestamp, index and memory.used";
    case SDP_LOG_CSV:
        return "a CSV header naming a step (step, global_step, iteration, iter) or time column "
               "and a memory column (allocated, reserved, memory_allocated, ..., with a unit "
               "suffix such as _mib)";
    case SDP_LOG_JSONL:
        return "JSON objects with a step (step, global_step, iteration, iter) and allocated, "
               "memory_allocated, reserved, memory_reserved or allocated_bytes.all.current";
    default: break;
    }
    return "the lines of torchtitan, Megatron-LM, DeepSpeed, mmengine, Swin, nvidia-smi (see "
           "--format-list), or lines with a step (step, global_step, iteration, iter) and a "
           "memory figure (alloc, allocated, mem_alloc, memory_allocated, reserved, "
           "memory_reserved)";
}

/* A JSON line that does not parse reads as a printed Python dict only when it is one
 * ({'step': 5, ...}); a cut or broken JSON line is a bad line. */
static bool python_dict(const char *s, size_t len)
{
    size_t b = 0;
    while (b < len && (s[b] == ' ' || s[b] == '\t')) b++;
    b++;
    while (b < len && s[b] == ' ') b++;
    return b < len && s[b] == '\'';
}

/* A text line: the preset of this file's framework, else the first preset that claims the
 * line and gives a figure, else key=value text. */
static void read_text_line(file_ctx *fc, const char *s, size_t len, record *r)
{
    if (fc->preset) {
        fc->preset->read(s, len, r, &fc->st);
        return;
    }
    for (size_t i = 0; !fc->generic && i < sdp_log_preset_total; i++) {
        const sdp_log_preset *p = &sdp_log_presets[i];
        if (p->key && !contains(s, len, p->key)) continue;
        memset(r, 0, sizeof *r);
        if (!p->read(s, len, r, &fc->st)) continue;
        fc->claimed = true;
        if (fc->st.none_why) fc->claimed_why = fc->st.none_why;
        if (has_memory(r)) fc->preset = p;
        return;
    }
    memset(r, 0, sizeof *r);
    if (fc->claimed) return;   /* a framework's log whose figures are yet to come */
    parse_text(s, len, r);
}

static sdp_log_axis axis_of(const file_ctx *fc, const record *r)
{
    if (fc->format == SDP_LOG_CSV || fc->format == SDP_LOG_NVSMI)
        return fc->seconds ? SDP_AXIS_SECOND : SDP_AXIS_STEP;
    if (fc->format == SDP_LOG_JSONL)
        return !r->has[F_STEP] && r->has[F_TIME] ? SDP_AXIS_SECOND : SDP_AXIS_STEP;
    if (r->by_sample) return SDP_AXIS_SAMPLE;
    if ((fc->preset || fc->pattern) && !r->has[F_STEP] && r->has[F_TIME]) return SDP_AXIS_SECOND;
    return SDP_AXIS_STEP;
}

/* ---------- when nothing matches: what the file's lines look like ---------- */

#define SHAPE_LEN 36
#define SHAPES 32
#define SHAPE_LINES 20000

/* The lines seen while no sample was taken: their shapes (digits as N, blanks as one
 * space, the first SHAPE_LEN characters) and how often each preset's key appeared. */
typedef struct shapes {
    char text[SHAPES][SHAPE_LEN + 1];
    uint64_t count[SHAPES];
    size_t n;
    uint64_t lines;
    uint64_t key_hits[16];
} shapes;

static void shape_of(const char *s, size_t len, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o < SHAPE_LEN;) {
        unsigned char c = (unsigned char)s[i];
        if (isdigit(c)) {
            out[o++] = 'N';
            while (i < len && (isdigit((unsigned char)s[i]) || s[i] == '.')) i++;
        } else if (c == ' ' || c == '\t') {
            if (o && out[o - 1] != ' ') out[o++] = ' ';
            while (i < len && (s[i] == ' ' || s[i] == '\t')) i++;
        } else {
            out[o++] = c < 0x20 || c > 0x7e ? '?' : (char)c;
            i++;
        }
    }
    out[o] = '\0';
}

static void note_shape(shapes *sh, const char *s, size_t len)
{
    if (sh->lines >= SHAPE_LINES) return;
    sh->lines++;
    for (size_t p = 0; p < sdp_log_preset_total && p < 16; p++)
        if ((sdp_log_presets[p].key && contains(s, len, sdp_log_presets[p].key)) ||
            contains(s, len, sdp_log_presets[p].hint))
            sh->key_hits[p]++;
    char shp[SHAPE_LEN + 1];
    shape_of(s, len, shp);
    for (size_t i = 0; i < sh->n; i++)
        if (strcmp(sh->text[i], shp) == 0) { sh->count[i]++; return; }
    if (sh->n < SHAPES) {
        memcpy(sh->text[sh->n], shp, sizeof shp);
        sh->count[sh->n++] = 1;
    }
}

/* "closest format: megatron ("memory (MB)" in 12 lines); most frequent lines: "..." x40,
 * ..." into buf (sd_error's text holds 256 bytes: the most useful first). */
static void describe_shapes(const shapes *sh, char *buf, size_t size)
{
    size_t k = 0, best = SIZE_MAX;
    for (size_t p = 0; p < sdp_log_preset_total && p < 16; p++)
        if (sh->key_hits[p] && (best == SIZE_MAX || sh->key_hits[p] > sh->key_hits[best])) best = p;
    int w = best != SIZE_MAX
            ? snprintf(buf, size, "closest format: %s (its words in %llu line%s)",
                       sdp_log_presets[best].name,
                       (unsigned long long)sh->key_hits[best], sh->key_hits[best] == 1 ? "" : "s")
            : snprintf(buf, size, "no format's words appear (or give --pattern)");
    if (w < 0 || (size_t)w >= size) return;
    k = (size_t)w;
    size_t used[3] = {SHAPES, SHAPES, SHAPES};
    for (int top = 0; top < 3; top++) {
        size_t pick = SHAPES;
        for (size_t i = 0; i < sh->n; i++) {
            if (i == used[0] || i == used[1]) continue;
            if (pick == SHAPES || sh->count[i] > sh->count[pick]) pick = i;
        }
        if (pick == SHAPES) break;
        used[top] = pick;
        w = snprintf(buf + k, size - k, "%s\"%s\" x%llu", top ? ", " : "; most frequent lines: ",
                     sh->text[pick], (unsigned long long)sh->count[pick]);
        if (w < 0 || (size_t)w >= size - k) return;
        k += (size_t)w;
    }
}

static const char wandb_percent_why[] =
    "wandb's system.gpu.N.memoryAllocated is a percentage of the GPU's memory, not bytes: "
    "log memoryAllocatedBytes (newer wandb) or the torch figures";

/* A wandb line's GPUs, each into its own series (device_used, seconds from _timestamp). */
static sd_status take_gpus(sdp_log *log, file_ctx *fc, const record *r,
                           sdp_log_file_info *info, sd_error *err)
{
    for (int g = 0; g < r->gpus; g++) {
        if (isnan(r->gpu_used[g])) continue;
        record one = *r;
        one.gpus = 0;
        one.per_gpu = true;
        record_set(&one, F_GPU, g);
        record_set(&one, F_USED, r->gpu_used[g]);
        bool took = false;
        sd_status st = take(log, fc, &one, r->has[F_TIME] ? SDP_AXIS_SECOND : SDP_AXIS_SAMPLE,
                            -1, &took, err);
        if (st != SD_OK) return st;
        info->samples += took;
    }
    return SD_OK;
}

static void count_bad(sdp_log_file_info *info, uint64_t line, const char *why)
{
    if (!info->bad_lines) {
        info->first_bad_line = line;
        info->first_bad_why = why;
    }
    info->bad_lines++;
}

/* ---------- one JSON document: HF Trainer's trainer_state.json ---------- */

#define DOC_MAX (256u << 20)

typedef struct doc_buf { char *p; size_t n, cap; bool too_big; } doc_buf;

static bool doc_append(doc_buf *d, const char *s, size_t len)
{
    if (d->n + len + 2 > DOC_MAX) { d->too_big = true; return false; }
    if (d->n + len + 2 > d->cap) {
        size_t cap = d->cap ? d->cap : 1u << 16;
        while (cap < d->n + len + 2) cap *= 2;
        char *np = realloc(d->p, cap);
        if (!np) return false;
        d->p = np;
        d->cap = cap;
    }
    memcpy(d->p + d->n, s, len);
    d->n += len;
    d->p[d->n++] = '\n';
    d->p[d->n] = '\0';
    return true;
}

/* transformers' TrainerState.save_to_json (json.dumps(asdict(state), indent=2)): each entry
 * of "log_history" (Trainer.log: the logs plus "step" and "epoch") is a record. */
static sd_status read_log_history(sdp_log *log, file_ctx *fc, const doc_buf *d,
                                  sdp_log_file_info *info, sd_error *err)
{
    const char *k = d->p ? strstr(d->p, "\"log_history\"") : NULL;
    if (!k) return SD_OK;
    jscan j = {.p = k + 13, .end = d->p + d->n, .r = NULL, .depth = 0};
    uint64_t line = 1;
    for (const char *q = d->p; q < k; q++) line += *q == '\n';
    jws(&j);
    if (j.p >= j.end || *j.p != ':') return SD_OK;
    j.p++;
    jws(&j);
    if (j.p >= j.end || *j.p != '[') return SD_OK;
    j.p++;
    for (;;) {
        const char *from = j.p;
        jws(&j);
        for (const char *q = from; q < j.p; q++) line += *q == '\n';
        if (j.p >= j.end || *j.p == ']') break;
        record r;
        memset(&r, 0, sizeof r);
        j.r = &r;
        from = j.p;
        if (*j.p != '{' || !jvalue(&j, F_NONE, 1)) {
            count_bad(info, line, "a log_history entry that does not parse");
            break;
        }
        bool took = false;
        sd_status st = take(log, fc, &r, SDP_AXIS_STEP, -1, &took, err);
        if (st != SD_OK) return st;
        info->samples += took;
        for (const char *q = from; q < j.p; q++) line += *q == '\n';
        jws(&j);
        if (j.p < j.end && *j.p == ',') j.p++;
    }
    return SD_OK;
}

sd_status sdp_log_read(sdp_log *log, const char *path, size_t file,
                         sdp_log_format format, sdp_log_file_info *info, sd_error *err)
{
    memset(info, 0, sizeof *info);
    reader rd = {0};
    rd.f = open_input(path, err);
    if (!rd.f) return SD_EIO;
    rd.buf = malloc(SDP_LOG_MAX_LINE);
    rd.blk = malloc(READ_BLOCK);
    if (!rd.buf || !rd.blk) {
        free(rd.buf);
        free(rd.blk);
        gzclose(rd.f);
        return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    }
    file_ctx fc = {.file = file, .format = format};
    fc.st.table_gpu = -1;
    user_pattern up;
    if (log->pattern) {
        sd_status ps = pattern_compile(log->pattern, &up, err);
        if (ps != SD_OK) {
            if (err) sdp_error_set_source(err, path);
            free(rd.buf);
            free(rd.blk);
            gzclose(rd.f);
            return ps;
        }
        fc.pattern = &up;
        fc.format = SDP_LOG_TEXT;
    }
    csv_header h;
    bool have_header = false;
    doc_buf doc = {0};
    bool in_doc = false;
    sd_status st = SD_OK;
    shapes *sh = calloc(1, sizeof *sh);   /* NULL: the error only says less */
    size_t len;
    bool too_long, cut;
    while (st == SD_OK && next_line(&rd, &len, &too_long, &cut)) {
        char *s = rd.buf;
        uint64_t line_no = rd.line;   /* a record's first line */
        record r;
        memset(&r, 0, sizeof r);
        int64_t prank = -1;
        if (too_long) {
            r.bad = "a line longer than 64 KiB";
        } else {
            len = clean_line(s, len);
            size_t b = 0;
            while (b < len && (s[b] == ' ' || s[b] == '\t')) b++;
            if (b == len) continue;
            if (in_doc) {
                doc_append(&doc, s, len);
                continue;
            }
            if ((fc.format == SDP_LOG_AUTO || fc.format == SDP_LOG_JSONL) && !info->samples &&
                !fc.pattern && len - b == 1 && s[b] == '{' && rd.line == 1) {
                in_doc = true;                 /* a pretty-printed JSON document */
                fc.format = SDP_LOG_JSONL;
                doc_append(&doc, s, len);
                continue;
            }
            if (fc.format == SDP_LOG_AUTO) {
                if (s[b] == '{') fc.format = SDP_LOG_JSONL;
                else if (looks_like_csv_header(s, len, &h))
                    fc.format = contains(s, len, "memory.used") || contains(s, len, "memory.free")
                                ? SDP_LOG_NVSMI : SDP_LOG_CSV;
                else fc.format = SDP_LOG_TEXT;
            }
            if ((fc.format == SDP_LOG_CSV || fc.format == SDP_LOG_NVSMI) &&
                csv_quote_open(s, len, false)) {
                line_no = rd.line;
                char *whole = csv_join(&rd, s, &len, &cut, &r.bad);
                if (whole) s = whole;
            }
            if ((fc.format == SDP_LOG_CSV || fc.format == SDP_LOG_NVSMI) && !have_header &&
                !r.bad) {
                if (!csv_parse_header(s, len, &h)) continue;   /* preamble before the header */
                have_header = true;
                bool has_step = false;
                for (size_t c = 0; c < h.n; c++) has_step |= h.f[c] == F_STEP;
                fc.seconds = !has_step;
                continue;
            }
            if (fc.format == SDP_LOG_JSONL || (fc.format == SDP_LOG_TEXT && s[b] == '{')) {
                parse_jsonl(s, len, &r);
                if (!r.bad && r.gpus) {   /* wandb: one sample per GPU of the line */
                    st = take_gpus(log, &fc, &r, info, err);
                    fc.wandb = true;
                    continue;
                }
                if (!r.bad && r.gpu_percent_only) fc.claimed_why = wandb_percent_why;
                if (r.bad && python_dict(s, len)) {
                    memset(&r, 0, sizeof r);
                    parse_text(s, len, &r);
                    if (!r.has[F_STEP] && !r.has[F_TIME]) r.bad = "not a JSON object";
                } else if (r.bad) {
                    r.bad = "a JSON line that does not parse (cut short?)";
                }
            } else if (fc.format == SDP_LOG_TEXT) {
                size_t skip;
                prank = rank_prefix(s, len, &skip);
                if (contains(s, len, "out of memory") || contains(s, len, "OutOfMemoryError")) {
                    sdp_log_oom o;
                    if (oom_line(s, len, &o)) {
                        o.file = file;
                        o.line = rd.line;
                        o.rank = prank;
                        note_oom(log, &o);
                        continue;
                    }
                }
                if (fc.pattern) pattern_read(fc.pattern, s, &r);
                else read_text_line(&fc, s + skip, len - skip, &r);
            } else if (!r.bad) {
                parse_csv(&h, s, len, &r);
            }
        }
        if (!r.bad && cut && rd.line > 1 && has_memory(&r))
            r.bad = "the last line has no newline (cut short?)";
        bool took = false;
        if (!r.bad) {
            st = take(log, &fc, &r, axis_of(&fc, &r), prank, &took, err);
            if (st == SD_OK && !took && fc.format != SDP_LOG_TEXT && has_memory(&r))
                r.bad = "a memory figure without a step or time";
        }
        if (r.bad) count_bad(info, line_no, r.bad);
        info->samples += took;
        if (!info->samples && sh && !too_long) note_shape(sh, s, len);
        fc.generic |= took && fc.format == SDP_LOG_TEXT && !fc.preset;
    }
    if (st == SD_OK && in_doc) {
        if (doc.too_big)
            st = sdp_fail(err, SD_ELIMIT, SD_NO_OFFSET, "a JSON document larger than 256 MiB");
        else
            st = read_log_history(log, &fc, &doc, info, err);
        info->preset = "hf-trainer-state";
    }
    free(doc.p);
    if (st == SD_OK && rd.failed)
        st = sdp_fail(err, SD_EIO, SD_NO_OFFSET, "read error after line %llu (a damaged gzip "
                      "stream?)", (unsigned long long)rd.line);
    info->lines = rd.line;
    info->format = fc.format == SDP_LOG_AUTO ? SDP_LOG_TEXT : fc.format;
    free(rd.buf);
    free(rd.blk);
    free(rd.join);
    gzclose(rd.f);
    if (fc.pattern) regfree(&up.nr.re);
    info->preset = fc.pattern ? "pattern" : fc.preset ? fc.preset->name
                   : fc.wandb ? "wandb" : info->preset;
    if (st == SD_OK && info->samples == 0) {
        char more[256] = "";
        if (sh && fc.format == SDP_LOG_TEXT && sh->lines) describe_shapes(sh, more, sizeof more);
        if (fc.claimed_why)
            st = sdp_fail(err, SD_ESNAPSHOT, SD_NO_OFFSET, "no memory figure in %llu lines: %s",
                          (unsigned long long)info->lines, fc.claimed_why);
        else if (fc.pattern)
            st = sdp_fail(err, SD_ESNAPSHOT, SD_NO_OFFSET, "no line of %llu matches --pattern "
                          "with a memory figure%s%s", (unsigned long long)info->lines,
                          strstr(more, "; most") ? strstr(more, "; most") : "", "");
        else if (more[0])
            st = sdp_fail(err, SD_ESNAPSHOT, SD_NO_OFFSET, "no memory figure in %llu lines "
                          "(see --format-list); %s", (unsigned long long)info->lines, more);
        else
            st = sdp_fail(err, SD_ESNAPSHOT, SD_NO_OFFSET, "no memory figure in %llu lines; "
                          "looked for %s%s", (unsigned long long)info->lines,
                          looked_for(info->format), more);
    }
    free(sh);
    if (st != SD_OK && err) sdp_error_set_source(err, path);
    return st;
}
