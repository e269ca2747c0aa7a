/* attrib.c - which frame of an allocation stack names the culprit, and the group keys.
 *
 * The rules (docs/json-diff.md, mirrored by tests/truth_diff.py): a frame is user code
 * unless it is native (C++, "??", any non-.py source), generated (<frozen ...>), inside
 * torch, in Python's own library or in a third-party package. Hide/show patterns come
 * first. The site is the first user frame, innermost first; `via` is the nearest library
 * .py frame below it. Classification is pure string work on one frame, so the diff caches
 * it per frame id and computes each interned stack's key once.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "analysis/diff_internal.h"

struct sd_attrib {
    sd_group_by group_by;
    int depth;
    regex_t *hide, *show, *focus;
    size_t n_hide, n_show, n_focus;
};

/* ---------- frames as text ---------- */

void sdp_sbuf_put_frame(sdp_sbuf *b, const sd_frame *f)
{
    sdp_sbuf_puts(b, f->filename);
    sdp_sbuf_put(b, ":", 1);
    sdp_sbuf_put_int(b, f->line);
    sdp_sbuf_put(b, " ", 1);
    sdp_sbuf_puts(b, f->name);
}

/* ---------- patterns ---------- */

static void free_patterns(regex_t *r, size_t n)
{
    for (size_t i = 0; i < n; i++) regfree(&r[i]);
    free(r);
}

static sd_status compile_patterns(const char *const *pats, size_t n, const char *what,
                                  regex_t **out, size_t *n_out, sd_error *err)
{
    *out = NULL;
    *n_out = 0;
    if (n == 0) return SD_OK;
    regex_t *r = calloc(n, sizeof *r);
    if (!r) return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    for (size_t i = 0; i < n; i++) {
        int rc = regcomp(&r[i], pats[i], REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            char why[128];
            regerror(rc, &r[i], why, sizeof why);
            free_patterns(r, i);
            return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "bad %s pattern '%s': %s", what,
                            pats[i], why);
        }
    }
    *out = r;
    *n_out = n;
    return SD_OK;
}

sd_attrib *sd_attrib_create(const sd_attrib_options *opts, sd_error *err)
{
    sd_attrib *a = calloc(1, sizeof *a);
    if (!a) {
        sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        return NULL;
    }
    a->group_by = opts->group_by;
    a->depth = opts->depth > 0 ? opts->depth : 0;
    if (compile_patterns(opts->hide, opts->n_hide, "hide", &a->hide, &a->n_hide, err) ||
        compile_patterns(opts->show, opts->n_show, "show", &a->show, &a->n_show, err) ||
        compile_patterns(opts->focus, opts->n_focus, "focus", &a->focus, &a->n_focus,
                         err)) {
        sd_attrib_free(a);
        return NULL;
    }
    return a;
}

void sd_attrib_free(sd_attrib *a)
{
    if (!a) return;
    free_patterns(a->hide, a->n_hide);
    free_patterns(a->show, a->n_show);
    free_patterns(a->focus, a->n_focus);
    free(a);
}

/* Does any pattern match "FILENAME:LINE NAME"? */
static bool any_match(const regex_t *r, size_t n, const sd_frame *f)
{
    if (n == 0) return false;
    char small[512];
    sdp_sbuf heap = {0};
    const char *text;
    int len = snprintf(small, sizeof small, "%s:%lld %s", f->filename, (long long)f->line,
                       f->name);
    if (len >= 0 && (size_t)len < sizeof small) {
        text = small;
    } else {
        sdp_sbuf_put_frame(&heap, f);
        text = sdp_sbuf_str(&heap);
    }
    bool hit = false;
    for (size_t i = 0; i < n && !hit; i++) hit = regexec(&r[i], text, 0, NULL, 0) == 0;
    sdp_sbuf_free(&heap);
    return hit;
}

bool sd_attrib_frame_focused(const sd_attrib *a, const sd_frame *f)
{
    return any_match(a->focus, a->n_focus, f);
}

bool sd_attrib_has_focus(const sd_attrib *a) { return a->n_focus > 0; }
sd_group_by sd_attrib_group_by(const sd_attrib *a) { return a->group_by; }
int sd_attrib_depth(const sd_attrib *a) { return a->depth; }

/* ---------- group-by names ---------- */

static const char *const group_by_names[SD_GROUP_BY_COUNT] = {
    [SD_GROUP_SITE] = "site", [SD_GROUP_LEAF] = "leaf", [SD_GROUP_STACK] = "stack",
    [SD_GROUP_FILE] = "file", [SD_GROUP_FUNCTION] = "function",
};

const char *sd_group_by_name(sd_group_by by)
{
    return (unsigned)by < SD_GROUP_BY_COUNT ? group_by_names[by] : NULL;
}

bool sd_group_by_parse(const char *name, sd_group_by *out)
{
    for (int i = 0; i < SD_GROUP_BY_COUNT; i++)
        if (strcmp(name, group_by_names[i]) == 0) {
            *out = (sd_group_by)i;
            return true;
        }
    return false;
}

/* ---------- classification ---------- */

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

bool sdp_frame_is_python(const sd_frame *f) { return ends_with(f->filename, ".py"); }

bool sdp_path_is_torch(const char *fn)
{
    return strstr(fn, "/torch/") || strstr(fn, "\\torch\\");
}

static bool is_third_party(const char *fn)
{
    return strstr(fn, "site-packages") || strstr(fn, "dist-packages");
}

/* A Windows "...\PythonXY\lib\" directory, any case (the installer writes "Lib", some
 * tools "lib"). */
static bool is_windows_python_lib(const char *fn)
{
    for (const char *p = strchr(fn, '\\'); p; p = strchr(p + 1, '\\')) {
        if (strncasecmp(p + 1, "python", 6) != 0) continue;
        const char *end = strchr(p + 1, '\\');
        if (end && strncasecmp(end, "\\lib\\", 5) == 0) return true;
    }
    return false;
}

static bool is_stdlib(const char *fn)
{
    return strstr(fn, "/lib/python3") || strstr(fn, "/lib64/python3") ||
           strstr(fn, "/lib/pypy") || strstr(fn, "\\Lib\\") || is_windows_python_lib(fn);
}

static sd_frame_kind builtin_kind(const sd_frame *f)
{
    const char *fn = f->filename;
    if (fn[0] == '\0' || strcmp(fn, "??") == 0) return SD_FRAME_NATIVE;
    if (fn[0] == '<') return SD_FRAME_GENERATED;
    if (!ends_with(fn, ".py")) return SD_FRAME_NATIVE;
    /* site-packages first: an installed torch is torch, any other package third-party. */
    if (sdp_path_is_torch(fn)) return SD_FRAME_TORCH;
    if (is_third_party(fn)) return SD_FRAME_THIRD_PARTY;
    if (is_stdlib(fn)) return SD_FRAME_STDLIB;
    return SD_FRAME_USER;
}

sd_frame_kind sd_attrib_classify(const sd_attrib *a, const sd_frame *f)
{
    if (any_match(a->hide, a->n_hide, f)) return SD_FRAME_HIDDEN;
    if (any_match(a->show, a->n_show, f)) return SD_FRAME_USER;
    return builtin_kind(f);
}

const char *sd_frame_kind_name(sd_frame_kind k)
{
    static const char *const names[] = {"user", "native", "generated", "torch", "stdlib",
                                        "third-party", "hidden"};
    return (unsigned)k < SDP_ARRAY_LEN(names) ? names[k] : "?";
}

bool sd_frame_is_noise(const sd_frame *f)
{
    static const char *const names[] = {"unwind::unwind", "CapturedTraceback::gather",
                                        "gather_with_cpp", "_start", "__libc_start_main",
                                        "PyEval_", "PyObject_", "PyFunction_"};
    static const char *const files[] = {"core/boxing", "/Register", "/Redispatch",
                                        "pythonrun.c", "Modules/main.c", "Objects/call.c",
                                        "Objects/methodobject.c", "pycore_ceval.h",
                                        "ceval.c", "cpython/abstract.h"};
    for (size_t i = 0; i < SDP_ARRAY_LEN(names); i++)
        if (strstr(f->name, names[i])) return true;
    for (size_t i = 0; i < SDP_ARRAY_LEN(files); i++)
        if (strstr(f->filename, files[i])) return true;
    return false;
}

/* Position just after the last occurrence of `needle` in s, or NULL. */
static const char *after_last(const char *s, const char *needle)
{
    const char *hit = NULL;
    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) hit = p;
    return hit ? hit + strlen(needle) : NULL;
}

const char *sd_frame_short_path(const char *fn)
{
    static const char *const after[] = {"site-packages/", "site-packages\\",
                                        "dist-packages/", "dist-packages\\"};
    for (size_t i = 0; i < SDP_ARRAY_LEN(after); i++) {
        const char *p = after_last(fn, after[i]);
        if (p) return p;
    }
    const char *t = strstr(fn, "/torch/");
    if (!t) t = strstr(fn, "\\torch\\");
    if (t) return t + 1;
    /* Standard library: after ".../lib/pythonX.Y/" or "...\Lib\". */
    const char *lib = strstr(fn, "/lib/python");
    if (lib) {
        const char *slash = strchr(lib + 5, '/');
        if (slash) return slash + 1;
    }
    if (is_stdlib(fn)) {
        const char *p = after_last(fn, "\\Lib\\");
        for (const char *q = strchr(fn, '\\'); !p && q; q = strchr(q + 1, '\\'))
            if (strncasecmp(q, "\\lib\\", 5) == 0) p = q + 5;
        if (p) return p;
    }
    return fn;
}

/* ---------- sites and keys ---------- */

void sdp_attrib_site_kinds(const sd_frame *const *frames, const uint8_t *kinds, size_t n,
                           sd_site *out)
{
    out->site = -1;
    out->via = -1;
    out->is_user = false;
    if (n == 0) return;
    size_t site = n;
    for (size_t i = 0; i < n && site == n; i++)
        if (kinds[i] == SD_FRAME_USER) {
            site = i;
            out->is_user = true;
        }
    for (size_t i = 0; i < n && site == n; i++)
        if (sdp_frame_is_python(frames[i]) && !sdp_path_is_torch(frames[i]->filename))
            site = i;
    for (size_t i = 0; i < n && site == n; i++)
        if (sdp_frame_is_python(frames[i])) site = i;
    /* C++ only: the innermost frame that is not the unwinder's own (with stacks="all"
     * every stack starts with torch::unwind::unwind()). */
    for (size_t i = 0; i < n && site == n; i++)
        if (!sd_frame_is_noise(frames[i])) site = i;
    if (site == n) site = 0;
    out->site = (int32_t)site;
    /* via: where inside the library the allocation happened. The innermost non-torch .py
     * frame names the package the user called (einops/_backends.py einsum); when only
     * torch lies below, its innermost .py frame (nn/modules/linear.py forward) says more
     * than the module-call plumbing next to the site. */
    int32_t any_py = -1;
    for (size_t j = 0; j < site; j++) {
        if (!sdp_frame_is_python(frames[j]) || kinds[j] == SD_FRAME_USER) continue;
        if (any_py < 0) any_py = (int32_t)j;
        if (!sdp_path_is_torch(frames[j]->filename)) {
            out->via = (int32_t)j;
            return;
        }
    }
    out->via = any_py;
}

static void put_stack_key(const sd_frame *const *frames, size_t n, sdp_sbuf *b)
{
    size_t start = b->len;
    for (size_t i = 0; i < n; i++) {
        if (sd_frame_is_noise(frames[i])) continue;
        if (b->len > start) sdp_sbuf_put(b, ";", 1);
        sdp_sbuf_put_frame(b, frames[i]);
    }
    if (b->len == start) sdp_sbuf_puts(b, SD_NO_STACK);
}

void sdp_attrib_key_kinds(const sd_attrib *a, const sd_frame *const *frames,
                          const uint8_t *kinds, size_t n, sdp_sbuf *b)
{
    if (n == 0) {
        sdp_sbuf_puts(b, SD_NO_STACK);
        return;
    }
    if (a->group_by == SD_GROUP_LEAF) {
        sdp_sbuf_put_frame(b, frames[0]);
        return;
    }
    if (a->group_by == SD_GROUP_STACK) {
        put_stack_key(frames, n, b);
        return;
    }
    sd_site s;
    sdp_attrib_site_kinds(frames, kinds, n, &s);
    const sd_frame *f = frames[s.site];
    if (a->group_by == SD_GROUP_FILE) {
        sdp_sbuf_puts(b, f->filename);
        return;
    }
    if (a->group_by == SD_GROUP_FUNCTION) {
        sdp_sbuf_puts(b, f->filename);
        sdp_sbuf_put(b, " ", 1);
        sdp_sbuf_puts(b, f->name);
        return;
    }
    sdp_sbuf_put_frame(b, f);
    /* --depth: the user's callers, not the interpreter frames that sit between them. */
    int added = 0;
    for (size_t i = (size_t)s.site + 1; i < n && added < a->depth; i++) {
        if (kinds[i] != SD_FRAME_USER) continue;
        sdp_sbuf_puts(b, " <- ");
        sdp_sbuf_put_frame(b, frames[i]);
        added++;
    }
}

/* ---------- the public per-stack helpers (tests, other analyses) ---------- */

enum { KINDS_ON_STACK = 256 };

static uint8_t *kinds_of(const sd_attrib *a, const sd_frame *const *frames, size_t n,
                         uint8_t *small)
{
    uint8_t *k = n <= KINDS_ON_STACK ? small : malloc(n);
    if (!k) return NULL;
    for (size_t i = 0; i < n; i++) k[i] = (uint8_t)sd_attrib_classify(a, frames[i]);
    return k;
}

void sd_attrib_site(const sd_attrib *a, const sd_frame *const *frames, size_t n,
                    sd_site *out)
{
    uint8_t small[KINDS_ON_STACK] = {0};
    uint8_t *k = kinds_of(a, frames, n, small);
    if (!k) {
        /* Out of memory for a >256-frame stack: classify without the caches. */
        out->site = n ? 0 : -1;
        out->via = -1;
        out->is_user = false;
        return;
    }
    sdp_attrib_site_kinds(frames, k, n, out);
    if (k != small) free(k);
}

size_t sd_attrib_key(const sd_attrib *a, const sd_frame *const *frames, size_t n,
                     char *buf, size_t size)
{
    uint8_t small[KINDS_ON_STACK] = {0};
    uint8_t *k = kinds_of(a, frames, n, small);
    sdp_sbuf b = {0};
    if (k) sdp_attrib_key_kinds(a, frames, k, n, &b);
    if (k && k != small) free(k);
    const char *s = sdp_sbuf_str(&b);
    size_t len = strlen(s);
    if (size) {
        size_t m = len < size - 1 ? len : size - 1;
        memcpy(buf, s, m);
        buf[m] = '\0';
    }
    sdp_sbuf_free(&b);
    return len;
}
