/* sniff.c - say what an input looks like when it is not a pickle.
 *
 * A CI artifact directory holds READMEs, logs, images and JSON beside the snapshots. Fed
 * to the pickle reader, a text file reads like an attack ("refused opcode GLOBAL calling
 * 'make_minimum_required...'"). So the first bytes are looked at before parsing:
 *   - a pickle of protocol 2+ starts with PROTO (0x80): always handed on;
 *   - a known file signature (PNG, ELF, PDF, ...) is named;
 *   - otherwise the first opcodes are walked as protocol 0/1 would read them; if they
 *     read as a pickle (or the window ends first) the bytes are handed on, so every
 *     protocol 0/1 pickle accepted before is still accepted; if not, and the bytes are
 *     text, the text is named (JSON, HTML, XML, SVG, or plain text);
 *   - binary bytes that are none of these are left to the pickle reader, whose message
 *     (an unknown opcode at an offset) says as much as anything here could.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapdiff/summary.h"
#include "source/source_internal.h"

enum { SNIFF_WINDOW = 512, SNIFF_MAX_OPS = 64 };

static bool starts(const uint8_t *b, size_t n, const char *magic, size_t len)
{
    return n >= len && memcmp(b, magic, len) == 0;
}

static const char *binary_signature(const uint8_t *b, size_t n)
{
    static const struct { const char *magic; size_t len; const char *what; } sig[] = {
        {"\x89PNG\r\n\x1a\n", 8, "a PNG image"},
        {"\xff\xd8\xff", 3, "a JPEG image"},
        {"GIF87a", 6, "a GIF image"},
        {"GIF89a", 6, "a GIF image"},
        {"%PDF-", 5, "a PDF document"},
        {"\x7f" "ELF", 4, "an ELF binary"},
        {"\x93NUMPY", 6, "a NumPy array (.npy)"},
        {"\xff\xfe", 2, "UTF-16 text"},
        {"\xfe\xff", 2, "UTF-16 text"},
        {"SQLite format 3", 16, "an SQLite database"},
        {"BZh", 3, "bzip2 data (decompress it first)"},
        {"\xfd" "7zXZ", 6, "xz data (decompress it first)"},
        {"\x28\xb5\x2f\xfd", 4, "zstd data (decompress it first)"},
        {"7z\xbc\xaf\x27\x1c", 6, "a 7-Zip archive"},
    };
    for (size_t i = 0; i < sizeof sig / sizeof sig[0]; i++)
        if (starts(b, n, sig[i].magic, sig[i].len)) return sig[i].what;
    if (n >= 262 && memcmp(b + 257, "ustar", 5) == 0) return "a tar archive (unpack it first)";
    return NULL;
}

/* ---------- the protocol 0/1 walk ---------- */

/* The argument line of a text opcode, b[*i..'\n'): false when malformed. *open: the line
 * runs past the window (cannot tell, so it counts as a pickle). */
static bool line_ok(int op, const uint8_t *b, size_t n, size_t *i, bool *open)
{
    const uint8_t *nl = memchr(b + *i, '\n', n - *i);
    if (!nl) {
        *open = true;
        return true;
    }
    const uint8_t *p = b + *i, *end = nl;
    *i = (size_t)(nl - b) + 1;
    switch (op) {
    case 'I': case 'L': case 'F':   /* numbers: 01, -12L, 1.5e3, inf, nan */
        if (p == end) return false;
        for (; p < end; p++)
            if (!strchr("0123456789+-.eEinfaL", *p)) return false;
        return true;
    case 'p': case 'g':             /* memo index */
        if (p < end && *p == '-') p++;
        if (p == end) return false;
        for (; p < end; p++)
            if (!isdigit(*p)) return false;
        return true;
    case 'S':                       /* a quoted repr */
        return end - p >= 2 && (*p == '\'' || *p == '"') && end[-1] == *p;
    case 'c': case 'i':             /* module, one line; the name is the next opcode's line */
        if (p == end) return false;
        for (; p < end; p++)
            if (!isalnum(*p) && *p != '_' && *p != '.') return false;
        return true;
    default:                        /* V, P: any text */
        return true;
    }
}

/* Bytes after a binary opcode of protocol 1 (and the few of 2 seen early), or -1 when op
 * takes none of these; length-prefixed ones read their length. */
static long long binary_arg(int op, const uint8_t *b, size_t n, size_t i)
{
    switch (op) {
    case 'K': case 'q': case 'h': return 1;
    case 'M': return 2;
    case 'J': case 'j': case 'r': return 4;
    case 'G': return 8;
    case 'U': return i < n ? 1 + (long long)b[i] : 1;
    case 'T': case 'X':
        if (i + 4 > n) return 4;
        return 4 + ((long long)b[i] | (long long)b[i + 1] << 8 | (long long)b[i + 2] << 16 |
                    (long long)b[i + 3] << 24);
    default: return -1;
    }
}

/* Do the first bytes read as a protocol 0/1 pickle? */
static bool reads_as_pickle(const uint8_t *b, size_t n)
{
    size_t i = 0;
    for (int ops = 0; i < n && ops < SNIFF_MAX_OPS; ops++) {
        int op = b[i++];
        if (op == '.') return true;                                  /* STOP */
        if (strchr("(012NRabd}el]ostu)Q", op)) continue;             /* no argument */
        if (strchr("ILFpgSVPci", op)) {
            bool open = false;
            if (!line_ok(op, b, n, &i, &open)) return false;
            if (open) return true;
            if (op == 'c' || op == 'i') {                            /* the name line */
                const uint8_t *nl = memchr(b + i, '\n', n - i);
                if (!nl) return true;
                for (const uint8_t *p = b + i; p < nl; p++)
                    if (!isalnum(*p) && *p != '_' && *p != '.') return false;
                i = (size_t)(nl - b) + 1;
            }
            continue;
        }
        long long skip = binary_arg(op, b, n, i);
        if (skip < 0) return false;
        if ((unsigned long long)skip >= n - i) return true;
        i += (size_t)skip;
    }
    return true;
}

/* ---------- text ---------- */

static bool is_text(const uint8_t *b, size_t n)
{
    if (n == 0) return false;
    for (size_t i = 0; i < n; i++)
        if ((b[i] < 0x20 && !strchr("\t\n\r\f", b[i])) || b[i] == 0x7f) return false;
    return true;
}

static bool prefix_ci(const uint8_t *p, const uint8_t *end, const char *word)
{
    size_t k = strlen(word);
    if ((size_t)(end - p) < k) return false;
    for (size_t i = 0; i < k; i++)
        if (tolower(p[i]) != word[i]) return false;
    return true;
}

static const char *text_kind(const uint8_t *b, size_t n)
{
    const uint8_t *p = b, *end = b + n;
    if (starts(p, n, "\xef\xbb\xbf", 3)) p += 3;                     /* UTF-8 BOM */
    while (p < end && isspace(*p)) p++;
    if (p < end && (*p == '{' || *p == '[')) return "JSON";
    if (prefix_ci(p, end, "<!doctype html") || prefix_ci(p, end, "<html")) return "HTML";
    if (prefix_ci(p, end, "<svg")) return "an SVG image";
    if (prefix_ci(p, end, "<?xml")) return "XML";
    if (prefix_ci(p, end, "#!")) return "a script";
    return "text";
}

/* A summary opens a msgpack array (of 3 items in version 1; any small count in later
 * ones) whose first item is the 16-byte string "snapdiff.summary" (fixstr 0xb0). */
bool sd_summary_sniff(const uint8_t *b, size_t n)
{
    static const char tag[] = "\xb0" SD_SUMMARY_MAGIC;
    return n >= sizeof tag && b[0] >= 0x91 && b[0] <= 0x9f && memcmp(b + 1, tag, sizeof tag - 1) == 0;
}

const char *sdp_sniff_not_pickle(const uint8_t *b, size_t n)
{
    if (n == 0 || b[0] == 0x80) return NULL;      /* empty: the reader says so; PROTO */
    if (sd_summary_sniff(b, n)) return NULL;      /* a snapdiff summary: the model reads it */
    const char *sig = binary_signature(b, n);
    if (sig) return sig;
    size_t w = n < SNIFF_WINDOW ? n : SNIFF_WINDOW;
    if (reads_as_pickle(b, w)) return NULL;
    /* A window may cut a UTF-8 sequence: only bytes < 0x20 decide that it is binary. */
    return is_text(b, w) ? text_kind(b, w) : NULL;
}

sd_status sdp_sniff_check(const uint8_t *b, size_t n, const char *name, sd_error *err)
{
    const char *what = sdp_sniff_not_pickle(b, n);
    if (!what) return SD_OK;
    sdp_error_set_source(err, name);
    return sdp_fail(err, SD_EFORMAT, 0, "not a pickle: looks like %s (a snapshot is the "
                    "pickle that torch.cuda.memory._dump_snapshot writes)", what);
}

/* ---------- members left out of a directory or archive ---------- */

enum { SKIP_LIST_MAX = 16 };   /* names kept for the note; the count goes on */

bool sdp_sniff_skip(sd_input *in, const char *name, const uint8_t *head, size_t n)
{
    if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) return false;   /* gzip: judged later */
    /* An empty file among the ranks (a rank that died before it wrote) is left out and
     * named, like a README: the others still load. So is a summary, when the command
     * needs the snapshot itself. */
    const char *what = n == 0 ? "empty"
                       : in->skip_summaries && sd_summary_sniff(head, n) ? "a snapdiff summary"
                       : sdp_sniff_not_pickle(head, n);
    if (!what) return false;
    if (!in->skip_list) in->skip_list = calloc(SKIP_LIST_MAX, sizeof *in->skip_list);
    if (in->skip_list && in->n_skipped < SKIP_LIST_MAX)
        snprintf(in->skip_list[in->n_skipped], sizeof in->skip_list[0], "%s (%s)", name, what);
    in->n_skipped++;
    return true;
}

bool sdp_sniff_skip_zip(sd_input *in, const char *name, zip_uint64_t index)
{
    uint8_t head[512];
    zip_file_t *zf = zip_fopen_index(in->zip, index, 0);
    if (!zf) return false;                    /* reading it later says why */
    zip_int64_t got = zip_fread(zf, head, sizeof head);
    zip_fclose(zf);
    return got >= 0 && sdp_sniff_skip(in, name, head, (size_t)got);
}

static int cmp_name(const void *a, const void *b) { return strcmp(a, b); }

void sdp_sniff_sort_skipped(sd_input *in)
{
    size_t kept = in->n_skipped < SKIP_LIST_MAX ? in->n_skipped : SKIP_LIST_MAX;
    if (!in->skip_list || kept == 0) return;
    qsort(in->skip_list, kept, sizeof *in->skip_list, cmp_name);
    size_t k = 0, room = sizeof in->skipped;
    in->skipped[0] = '\0';
    for (size_t i = 0; i < kept && k < room; i++)
        k += (size_t)snprintf(in->skipped + k, room - k, "%s%s", i ? ", " : "", in->skip_list[i]);
    if (kept < in->n_skipped && k < room)
        k += (size_t)snprintf(in->skipped + k, room - k, ", ...");
    if (k >= room) memcpy(in->skipped + room - 4, "...", 4);
}
