/* attrib.c - which frame of an allocation stack names the culprit, and the group keys.
 *
 * The rules (docs/json-diff.md, mirrored by tests/truth/truth_diff.py): a frame is user code
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
#include "model/memo.h"

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
    sd_error_clear(err);
    if (sdp_options_check(opts, SD_ATTRIB_OPTIONS_VERSION, "sd_attrib_options", err))
        return NULL;
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
    [SD_GROUP_ANNOTATION] = "annotation", [SD_GROUP_COMPILE_CONTEXT] = "compile-context",
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

static bool has_any(const char *s, const char *const *subs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strstr(s, subs[i])) return true;
    return false;
}

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool sd_frame_is_native_noise(const sd_frame *f)
{
    static const char *const names[] = {
        /* allocator and tensor construction */
        "CachingAllocator", "c10::cuda::CUDAAllocator", "c10::Allocator::", "at::detail::empty",
        "at::detail::_empty", "at::native::empty_",
        "c10::StorageImpl", "c10::intrusive_ptr<c10::StorageImpl", "c10::make_intrusive<c10::StorageImpl",
        /* unwinder */
        "torch::unwind::", "torch::CapturedTraceback", "gather_with_cpp",
        /* dispatcher and boxing */
        "c10::Dispatcher", "c10::impl::BoxedKernelWrapper", "wrap_kernel_functor",
        "c10::impl::call_functor_with_args", "c10::impl::make_boxed_from_unboxed_functor",
        "c10::BoxedKernel", "c10::KernelFunction", "c10::OperatorHandle",
        "c10::TypedOperatorHandle", "c10::impl::boxed_", "namespace)::wrapper_",
        /* the autograd engine's own loop */
        "torch::autograd::Engine::", "torch::autograd::Node::operator()",
        "torch::autograd::call_function", "torch::autograd::python::PythonEngine",
        /* Python bindings and the interpreter */
        "THPVariable_", "THPFunction_", "pybind11::", "torch::PythonArgParser",
        "cfunction_call", "_PyObject_", "_PyEval_", "_PyFunction_", "method_vectorcall",
        "PyRun_", "Py_RunMain", "Py_BytesMain", "pyrun_file", "run_mod", "run_eval_code_obj",
        /* libc, threads, start-up */
        "start_thread", "__clone", "execute_native_thread_routine", "__libc_start",
        "std::thread::", "std::_Function_handler"};
    static const char *const files[] = {"CUDACachingAllocator.cpp", "pthread_create.c",
                                        "clone.S", "clone3.S", "libc-start.c",
                                        "libc_start_call_main.h"};
    if (sd_frame_is_noise(f)) return true;
    return has_any(f->name, names, SDP_ARRAY_LEN(names)) ||
           has_any(f->filename, files, SDP_ARRAY_LEN(files));
}

bool sd_frame_is_mode_shim(const sd_frame *f)
{
    static const char *const files[] = {"torch/utils/_device.py", "torch/overrides.py",
                                        "torch\\utils\\_device.py", "torch\\overrides.py"};
    return has_any(f->filename, files, SDP_ARRAY_LEN(files));
}

/* ---------- native sites ---------- */

/* The class of "torch::autograd::[...::]CLASS::apply(...)", or NULL. */
static const char *autograd_class(const char *name, size_t *len)
{
    if (!starts_with(name, "torch::autograd::")) return NULL;
    const char *apply = strstr(name, "::apply");
    if (!apply || (apply[7] != '(' && apply[7] != '\0')) return NULL;
    const char *cls = name;
    for (const char *p = strstr(name, "::"); p && p < apply; p = strstr(p + 2, "::"))
        cls = p + 2;
    *len = (size_t)(apply - cls);
    return cls;
}

sd_site_how sd_frame_native_how(const sd_frame *f)
{
    size_t len;
    const char *cls = autograd_class(f->name, &len);
    if (cls) {
        if (len == 14 && memcmp(cls, "AccumulateGrad", 14) == 0) return SD_SITE_ACCUMULATE_GRAD;
        for (size_t i = 0; i + 8 <= len; i++)
            if (memcmp(cls + i, "Backward", 8) == 0) return SD_SITE_AUTOGRAD;
        return SD_SITE_FRAME;
    }
    if (starts_with(f->name, "at::_ops::") && strstr(f->name + 10, "::")) return SD_SITE_ATEN;
    return SD_SITE_FRAME;
}

size_t sd_site_native_name(const sd_frame *f, sd_site_how how, char *buf, size_t size)
{
    size_t len = 0;
    const char *cls;
    int n = 0;
    switch (how) {
    case SD_SITE_ACCUMULATE_GRAD:
        n = snprintf(buf, size, "autograd AccumulateGrad (parameter gradients)");
        break;
    case SD_SITE_AUTOGRAD:
        cls = autograd_class(f->name, &len);
        n = snprintf(buf, size, "autograd %.*s", cls ? (int)len : 0, cls ? cls : "");
        break;
    case SD_SITE_ATEN: {
        const char *op = f->name + 10, *end = strstr(op, "::");
        n = snprintf(buf, size, "aten::%.*s", end ? (int)(end - op) : 0, op);
        break;
    }
    default:
        if (size) buf[0] = '\0';
        break;
    }
    return n > 0 ? (size_t)n : 0;
}

/* Index of the native site of a stack with no .py frame; *how what it is. */
static size_t native_site(const sd_frame *const *frames, size_t n, uint8_t *how)
{
    *how = SD_SITE_FRAME;
    for (size_t i = 0; i < n; i++) {
        sd_site_how h = sd_frame_native_how(frames[i]);
        if (h == SD_SITE_AUTOGRAD || h == SD_SITE_ACCUMULATE_GRAD) {
            *how = (uint8_t)h;
            return i;
        }
    }
    for (size_t i = n; i-- > 0;)
        if (sd_frame_native_how(frames[i]) == SD_SITE_ATEN) {
            *how = SD_SITE_ATEN;
            return i;
        }
    return sd_attrib_leaf(frames, n);
}

size_t sd_attrib_leaf(const sd_frame *const *frames, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!sd_frame_is_native_noise(frames[i])) return i;
    return 0;
}

/* ---------- sites and keys ---------- */

void sdp_attrib_site_kinds(const sd_frame *const *frames, const uint8_t *kinds, size_t n,
                           sd_site *out)
{
    out->site = -1;
    out->via = -1;
    out->is_user = false;
    out->backward = false;
    out->how = SD_SITE_FRAME;
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
    /* No Python frame (the autograd engine's thread, C++ callers): the autograd node, else
     * the outermost ATen op, else the innermost frame that is not native noise. */
    if (site == n) site = native_site(frames, n, &out->how);
    out->site = (int32_t)site;
    /* via: where inside the library the allocation happened. The innermost non-torch .py
     * frame names the package the user called (einops/_backends.py einsum); when only
     * torch lies below, its innermost .py frame (nn/modules/linear.py forward) says more
     * than the module-call plumbing next to the site. torch's mode shims
     * (utils/_device.py, overrides.py) sit under every call and say nothing. */
    int32_t any_py = -1;
    for (size_t j = 0; j < site; j++) {
        if (!sdp_frame_is_python(frames[j]) || kinds[j] == SD_FRAME_USER ||
            sd_frame_is_mode_shim(frames[j]))
            continue;
        if (any_py < 0) any_py = (int32_t)j;
        if (!sdp_path_is_torch(frames[j]->filename)) {
            out->via = (int32_t)j;
            return;
        }
    }
    out->via = any_py;
}

void sdp_attrib_site_view(const sdp_stack_view *stack, const sdp_stack_view *fwd,
                          sd_site *out)
{
    sdp_attrib_site_kinds(stack->frames, stack->kinds, stack->n, out);
    if (out->is_user || !fwd || fwd->n == 0) return;
    sd_site f;
    sdp_attrib_site_kinds(fwd->frames, fwd->kinds, fwd->n, &f);
    if (!f.is_user) return;
    *out = f;
    out->backward = true;
}

static void put_stack_key(const sd_frame *const *frames, size_t n, sdp_sbuf *b)
{
    size_t start = b->len;
    for (size_t i = 0; i < n; i++) {
        if (sd_frame_is_native_noise(frames[i])) continue;
        if (b->len > start) sdp_sbuf_put(b, ";", 1);
        sdp_sbuf_put_frame(b, frames[i]);
    }
    if (b->len == start) sdp_sbuf_puts(b, SD_NO_STACK);
}

static void put_native_name(sdp_sbuf *b, const sd_frame *f, sd_site_how how)
{
    char label[SD_SITE_LABEL_MAX];
    sd_site_native_name(f, how, label, sizeof label);
    sdp_sbuf_puts(b, label);
}

void sdp_attrib_key_view(const sd_attrib *a, const sdp_stack_view *stack,
                         const sdp_stack_view *fwd, sdp_sbuf *b)
{
    const sd_frame *const *frames = stack->frames;
    size_t n = stack->n;
    /* What the snapshot recorded beside the frames, whatever the frames are. */
    if (a->group_by == SD_GROUP_ANNOTATION || a->group_by == SD_GROUP_COMPILE_CONTEXT) {
        bool ann = a->group_by == SD_GROUP_ANNOTATION;
        const char *v = stack->ctx ? ann ? stack->ctx->user_metadata
                                         : stack->ctx->compile_context : "";
        sdp_sbuf_puts(b, v && v[0] ? v : ann ? SD_NO_ANNOTATION : SD_NO_COMPILE_CONTEXT);
        return;
    }
    if (n == 0 && (!fwd || fwd->n == 0)) {
        sdp_sbuf_puts(b, SD_NO_STACK);
        return;
    }
    if (a->group_by == SD_GROUP_LEAF && n) {
        sdp_sbuf_put_frame(b, frames[sd_attrib_leaf(frames, n)]);
        return;
    }
    if (a->group_by == SD_GROUP_STACK && n) {
        put_stack_key(frames, n, b);
        return;
    }
    sd_site s;
    sdp_attrib_site_view(stack, fwd, &s);
    if (s.site < 0) {
        sdp_sbuf_puts(b, SD_NO_STACK);
        return;
    }
    const sdp_stack_view *in = s.backward ? fwd : stack;
    const sd_frame *f = in->frames[s.site];
    const char *mark = s.backward ? " [backward]" : "";
    if (s.how != SD_SITE_FRAME) {
        /* A native site has no file of its own: file keys say what kind of code it is. */
        if (a->group_by == SD_GROUP_FILE)
            sdp_sbuf_puts(b, s.how == SD_SITE_ATEN ? "<aten>" : "<autograd>");
        else
            put_native_name(b, f, (sd_site_how)s.how);
        return;
    }
    if (a->group_by == SD_GROUP_FILE) {
        sdp_sbuf_puts(b, f->filename);
        return;
    }
    if (a->group_by == SD_GROUP_FUNCTION) {
        sdp_sbuf_puts(b, f->filename);
        sdp_sbuf_put(b, " ", 1);
        sdp_sbuf_puts(b, f->name);
        sdp_sbuf_puts(b, mark);
        return;
    }
    sdp_sbuf_put_frame(b, f);
    sdp_sbuf_puts(b, mark);
    /* --depth: the user's callers, not the interpreter frames that sit between them. */
    int added = 0;
    for (size_t i = (size_t)s.site + 1; i < in->n && added < a->depth; i++) {
        if (in->kinds[i] != SD_FRAME_USER) continue;
        sdp_sbuf_puts(b, " <- ");
        sdp_sbuf_put_frame(b, in->frames[i]);
        added++;
    }
}

void sdp_attrib_key_kinds(const sd_attrib *a, const sd_frame *const *frames,
                          const uint8_t *kinds, size_t n, sdp_sbuf *b)
{
    sdp_stack_view v = {frames, kinds, n, NULL};
    sdp_attrib_key_view(a, &v, NULL, b);
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

/* ---------- sites of a snapshot's stacks ---------- */

typedef struct view_buf {
    const sd_frame *small_f[KINDS_ON_STACK];
    uint8_t small_k[KINDS_ON_STACK];
    const sd_frame **f;
    uint8_t *k;
} view_buf;

static bool view_load(const sd_attrib *a, const sd_snapshot *s, uint32_t stack, view_buf *vb,
                      sdp_stack_view *v)
{
    size_t n;
    const uint32_t *ids = sd_snapshot_stack(s, stack, &n);
    vb->f = vb->small_f;
    vb->k = vb->small_k;
    if (n > KINDS_ON_STACK) {
        vb->f = malloc(n * sizeof *vb->f);
        vb->k = malloc(n);
        if (!vb->f || !vb->k) {
            free(vb->f);
            free(vb->k);
            vb->f = NULL;
            vb->k = NULL;
            return false;
        }
    }
    for (size_t i = 0; i < n; i++) {
        vb->f[i] = sd_snapshot_frame(s, ids[i]);
        vb->k[i] = (uint8_t)sd_attrib_classify(a, vb->f[i]);
    }
    *v = (sdp_stack_view){vb->f, vb->k, n, sd_snapshot_stack_context(s, stack)};
    return true;
}

static void view_free(view_buf *vb)
{
    if (vb->f != vb->small_f) free(vb->f);
    if (vb->k != vb->small_k) free(vb->k);
}

void sd_attrib_site_of_stack(const sd_attrib *a, const sd_snapshot *s, uint32_t stack,
                             sd_site *out)
{
    view_buf *mb = malloc(sizeof *mb), *fb = malloc(sizeof *fb);  /* 2.3 KiB each */
    sdp_stack_view v = {0}, fv = {0};
    *out = (sd_site){.site = -1, .via = -1};
    if (mb && fb && view_load(a, s, stack, mb, &v)) {
        uint32_t fwd = sd_snapshot_stack_context(s, stack)->forward_stack;
        bool has_fwd = fwd && view_load(a, s, fwd, fb, &fv);
        sdp_attrib_site_view(&v, has_fwd ? &fv : NULL, out);
        if (has_fwd) view_free(fb);
        view_free(mb);
    }
    free(mb);
    free(fb);
}

bool sdp_attrib_key_of_stack(const sd_attrib *a, const sd_snapshot *s, uint32_t stack,
                             sdp_sbuf *b)
{
    view_buf *mb = malloc(sizeof *mb), *fb = malloc(sizeof *fb);
    sdp_stack_view v = {0}, fv = {0};
    bool ok = mb && fb && view_load(a, s, stack, mb, &v);
    if (ok) {
        uint32_t fwd = sd_snapshot_stack_context(s, stack)->forward_stack;
        bool has_fwd = fwd && view_load(a, s, fwd, fb, &fv);
        if (has_fwd) fv.ctx = NULL;   /* the context is the stack's own (peak.c does so) */
        sdp_attrib_key_view(a, &v, has_fwd ? &fv : NULL, b);
        if (has_fwd) view_free(fb);
        view_free(mb);
    }
    free(mb);
    free(fb);
    return ok && !b->failed;
}

const sd_frame *sd_site_frame(const sd_snapshot *s, uint32_t stack, const sd_site *site,
                              int32_t index)
{
    if (index < 0) return NULL;
    if (site->backward) stack = sd_snapshot_stack_context(s, stack)->forward_stack;
    size_t n;
    const uint32_t *ids = sd_snapshot_stack(s, stack, &n);
    return (size_t)index < n ? sd_snapshot_frame(s, ids[index]) : NULL;
}

bool sd_site_label_of(const sd_snapshot *s, uint32_t stack, const sd_site *site,
                      sd_site_label *out)
{
    memset(out, 0, sizeof *out);
    const sd_frame *f = sd_site_frame(s, stack, site, site->site);
    if (!f) return false;
    out->backward = site->backward;
    out->name = f->name;
    if (site->how != SD_SITE_FRAME) {
        out->native = true;
        out->filename = "";
        out->line = 0;
        sd_site_native_name(f, (sd_site_how)site->how, out->label, sizeof out->label);
    } else {
        out->filename = f->filename;
        out->line = f->line;
    }
    return true;
}

const char *sd_site_label_name(const sd_site_label *l)
{
    return l->native ? l->label : l->name ? l->name : "";
}

/* ---------- labels: a site as every view shows it ---------- */

static bool is_path_sep(char c) { return c == '/' || c == '\\'; }

/* The common part of the user files cut back to a separator. A Jupyter kernel's directory
 * (".../ipykernel_114/") is kept: a cell is named only by a number. */
static size_t prefix_dir_len(const char *prefix, size_t len)
{
    if (!prefix) return 0;
    while (len > 0 && !is_path_sep(prefix[len - 1])) len--;
    if (len > 1) {
        size_t start = len - 1;
        while (start > 0 && !is_path_sep(prefix[start - 1])) start--;
        if (strncmp(prefix + start, "ipykernel_", 10) == 0) len = start;
    }
    return len > 1 ? len : 0;
}

/* The directory every user frame of the file shares ("/home/alice/proj/"), by the
 * built-in rules (no hide/show patterns: the file's property, the same for every view
 * and option). Computed once per snapshot and kept on it (model/memo.h). */
static size_t label_prefix(const sd_snapshot *s, const char **out)
{
    size_t len = 0;
    if (sdp_snapshot_label_prefix(s, out, &len)) return len;
    size_t n;
    const sd_frame *fr = sdp_snapshot_frames(s, &n);
    const char *p = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *fn = fr[i].filename;
        if (builtin_kind(&fr[i]) != SD_FRAME_USER || (p && len == 0)) continue;
        if (!p) {
            p = fn;
            len = strlen(fn);
            continue;
        }
        size_t m = 0;
        while (m < len && fn[m] == p[m]) m++;
        len = m;
    }
    len = prefix_dir_len(p, len);
    sdp_snapshot_set_label_prefix(s, p, len);
    *out = p;
    return len;
}

size_t sdp_attrib_label_prefix(const sd_snapshot *s, const char **out)
{
    return label_prefix(s, out);
}

void sdp_attrib_share_labels(const sd_snapshot *const *snaps, size_t n)
{
    const char *p = NULL;
    size_t len = 0;
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        if (!snaps[i]) continue;
        const char *q;
        size_t m = label_prefix(snaps[i], &q);
        if (!q) continue;                 /* no user frame: nothing to agree on */
        if (!any) {
            p = q;
            len = m;
            any = true;
            continue;
        }
        size_t k = 0;
        while (k < len && k < m && p[k] == q[k]) k++;
        len = k;
    }
    len = prefix_dir_len(p, len);
    for (size_t i = 0; any && i < n; i++) {
        const char *q;
        if (snaps[i] && label_prefix(snaps[i], &q) != len)
            sdp_snapshot_set_label_prefix(snaps[i], p, len);
    }
}

const char *sd_frame_label_path(const sd_snapshot *s, const char *filename)
{
    const char *p = sd_frame_short_path(filename);
    if (p != filename || !s) return p;
    const char *prefix;
    size_t len = label_prefix(s, &prefix);
    if (len && strncmp(filename, prefix, len) == 0) return filename + len;
    return filename;
}

enum { LABEL_NAME_MAX = 60 };   /* C++ names run to kilobytes */

/* snprintf's answer as a length that fits buf. */
static size_t fitted(int n, size_t size)
{
    if (n < 0 || size == 0) return 0;
    return (size_t)n < size ? (size_t)n : size - 1;
}

size_t sd_frame_label(const sd_snapshot *s, const sd_frame *f, char *buf, size_t size)
{
    sd_site_how how = sd_frame_native_how(f);
    if (how != SD_SITE_FRAME) return fitted((int)sd_site_native_name(f, how, buf, size), size);
    int n = (int)strlen(f->name);
    const char *ell = "";
    if (n > LABEL_NAME_MAX) {
        n = LABEL_NAME_MAX;
        ell = "...";
    }
    return fitted(snprintf(buf, size, "%s:%lld %.*s%s", sd_frame_label_path(s, f->filename),
                           (long long)f->line, n, f->name, ell), size);
}

size_t sd_site_text(const sd_snapshot *s, uint32_t stack, const sd_site *site, char *buf,
                    size_t size)
{
    const sd_frame *f = s ? sd_site_frame(s, stack, site, site->site) : NULL;
    if (!f) return fitted(snprintf(buf, size, "%s", SD_NO_STACK), size);
    if (site->how != SD_SITE_FRAME)
        return fitted((int)sd_site_native_name(f, (sd_site_how)site->how, buf, size), size);
    size_t len = sd_frame_label(s, f, buf, size);
    if (site->backward && len + 1 < size)
        len += fitted(snprintf(buf + len, size - len, " [backward]"), size - len);
    return len;
}

size_t sd_site_via_text(const sd_snapshot *s, uint32_t stack, const sd_site *site, char *buf,
                        size_t size)
{
    const sd_frame *v = s ? sd_site_frame(s, stack, site, site->via) : NULL;
    if (!v) {
        if (size) buf[0] = '\0';
        return 0;
    }
    return sd_frame_label(s, v, buf, size);
}

/* The innermost frame of a stack that is not native noise: what -g leaf groups by. */
static const sd_frame *leaf_of(const sd_snapshot *s, uint32_t stack)
{
    size_t n;
    const uint32_t *ids = sd_snapshot_stack(s, stack, &n);
    for (size_t i = 0; i < n; i++) {
        const sd_frame *f = sd_snapshot_frame(s, ids[i]);
        if (!sd_frame_is_native_noise(f)) return f;
    }
    return n ? sd_snapshot_frame(s, ids[0]) : NULL;
}

enum { DISTINCT_LABEL_MAX = 1400, DISTINCT_SCAN = 4096 };

/* The hash of row j's label (+ 1: 0 means not yet computed), cached when it can be. */
static uint64_t row_label_hash(sd_row_label_fn label_at, void *ctx, size_t j, uint64_t *hashes,
                               size_t n_hashes)
{
    if (j < n_hashes && hashes[j]) return hashes[j];
    char buf[DISTINCT_LABEL_MAX];
    label_at(ctx, j, buf, sizeof buf);
    uint64_t h = sdp_hash_bytes(SDP_HASH_SEED, buf, strlen(buf)) | 1;
    if (j < n_hashes) hashes[j] = h;
    return h;
}

size_t sd_group_label_distinct(const sd_attrib *a, sd_row_label_fn label_at, void *ctx,
                               size_t row, uint64_t *hashes, size_t n_hashes, char *buf,
                               size_t size)
{
    if (!size) return 0;
    label_at(ctx, row, buf, size);
    size_t len = strlen(buf);
    if (!a || a->group_by != SD_GROUP_STACK) return len;
    size_t same = 0;
    uint64_t mine = row_label_hash(label_at, ctx, row, hashes, n_hashes);
    char other[DISTINCT_LABEL_MAX];
    for (size_t j = row > DISTINCT_SCAN ? row - DISTINCT_SCAN : 0; j < row; j++) {
        if (row_label_hash(label_at, ctx, j, hashes, n_hashes) != mine) continue;
        label_at(ctx, j, other, sizeof other);
        same += strcmp(other, buf) == 0;
    }
    if (same && len + 1 < size)
        len += fitted(snprintf(buf + len, size - len, " (stack %zu)", same + 1), size - len);
    return len;
}

size_t sd_group_label(const sd_attrib *a, const sd_snapshot *s, uint32_t stack,
                      const sd_site *site, const char *key, bool with_via, char *buf,
                      size_t size)
{
    if (!size) return 0;
    if (a->group_by == SD_GROUP_ANNOTATION || a->group_by == SD_GROUP_COMPILE_CONTEXT) {
        /* The recorded string: one line, control characters shown as '?'. */
        size_t k = 0;
        for (const char *p = key ? key : ""; *p && k + 1 < size; p++)
            buf[k++] = (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p;
        buf[k] = '\0';
        return k;
    }
    sd_site own;
    if (s && !site) {
        sd_attrib_site_of_stack(a, s, stack, &own);
        site = &own;
    }
    const sd_frame *f = s ? sd_site_frame(s, stack, site, site->site) : NULL;
    if (!f) return fitted(snprintf(buf, size, "%s", SD_NO_STACK), size);
    if (a->group_by == SD_GROUP_LEAF && leaf_of(s, stack))
        return sd_frame_label(s, leaf_of(s, stack), buf, size);
    if (a->group_by == SD_GROUP_FILE) {
        if (site->how != SD_SITE_FRAME)
            return fitted(snprintf(buf, size, "%s",
                                   site->how == SD_SITE_ATEN ? "<aten>" : "<autograd>"), size);
        return fitted(snprintf(buf, size, "%s", sd_frame_label_path(s, f->filename)), size);
    }
    if (a->group_by == SD_GROUP_FUNCTION && site->how == SD_SITE_FRAME)
        /* The group merges every line of the function: no one line stands for it. */
        return fitted(snprintf(buf, size, "%s %s%s", sd_frame_label_path(s, f->filename),
                               f->name, site->backward ? " [backward]" : ""), size);
    size_t len = sd_site_text(s, stack, site, buf, size);
    char c[512];
    /* via belongs to the site: it comes before the callers. */
    if (with_via && sd_site_via_text(s, stack, site, c, sizeof c) && len + 1 < size)
        len += fitted(snprintf(buf + len, size - len, " via %s", c), size - len);
    if (a->group_by != SD_GROUP_SITE || site->how != SD_SITE_FRAME) return len;
    /* --depth: the user's callers, as the key has them. */
    int added = 0;
    for (int32_t i = site->site + 1; added < a->depth && len + 1 < size; i++) {
        const sd_frame *cf = sd_site_frame(s, stack, site, i);
        if (!cf) break;
        if (sd_attrib_classify(a, cf) != SD_FRAME_USER) continue;
        sd_frame_label(s, cf, c, sizeof c);
        len += fitted(snprintf(buf + len, size - len, " <- %s", c), size - len);
        added++;
    }
    return len;
}
