/* check_diff.c - unit tests of attribution (attrib.c), the profile (profile.c), the diff
 * (diff.c), its gate (gate.c), the folded renderer (diff_folded.c) and the loader.
 *
 * Tables of frames with the kind, site, via and key worked out by hand from the rules in
 * docs/json-diff.md; then diffs of the scenario fixtures that testdata/make_leak_fixtures.py
 * writes (figures from testdata/leak/expected.json, derived by hand in that script).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/diff_render.h"
#include "snapdiff/diff.h"
#include "snapdiff/gate.h"
#include "snapdiff/load.h"

#include "check_helpers.h"

#define LEN SDP_TEST_LEN
#define VENV "/home/u/venv/lib/python3.11/site-packages"

/* ---------- classification ---------- */

static const struct {
    const char *filename;
    sd_frame_kind want;
} kind_cases[] = {
    {"??", SD_FRAME_NATIVE},
    {"", SD_FRAME_NATIVE},
    {"RegisterCUDA.cpp", SD_FRAME_NATIVE},
    {"/usr/local/src/conda/python-3.10.14/Python/ceval.c", SD_FRAME_NATIVE},
    {"<frozen runpy>", SD_FRAME_GENERATED},
    {"<string>", SD_FRAME_GENERATED},
    {VENV "/torch/nn/modules/module.py", SD_FRAME_TORCH},
    {"/src/pytorch/torch/optim/sgd.py", SD_FRAME_TORCH},
    {"C:\\venv\\Lib\\site-packages\\torch\\nn\\modules\\module.py", SD_FRAME_TORCH},
    {VENV "/einops/einops.py", SD_FRAME_THIRD_PARTY},
    {"/usr/local/lib/python3.10/dist-packages/vllm/utils.py", SD_FRAME_THIRD_PARTY},
    {"C:\\proj\\.venv\\lib\\site-packages\\transformers\\modeling_utils.py",
     SD_FRAME_THIRD_PARTY},
    {"/usr/lib/python3.10/threading.py", SD_FRAME_STDLIB},
    {"/opt/conda/envs/x/lib/python3.9/runpy.py", SD_FRAME_STDLIB},
    {"/opt/pypy/lib/pypy3.9/copy.py", SD_FRAME_STDLIB},
    {"C:\\Python311\\Lib\\copy.py", SD_FRAME_STDLIB},
    {"C:\\Users\\b\\AppData\\Local\\Programs\\Python\\Python310\\lib\\threading.py",
     SD_FRAME_STDLIB},
    {"C:\\proj\\lib\\util.py", SD_FRAME_USER},
    {"/home/u/proj/train.py", SD_FRAME_USER},
    {"d:\\ai\\dev\\joel\\main.py", SD_FRAME_USER},
    {"/home/u/proj/torchlike/x.py", SD_FRAME_USER},
    {"/home/u/proj/kernel.cu", SD_FRAME_NATIVE},
};

START_TEST(classify_table)
{
    sd_attrib_options o = {0};
    sd_error err;
    sd_error_clear(&err);
    sd_attrib *a = sd_attrib_create(&o, &err);
    ck_assert_ptr_nonnull(a);
    sd_frame f = {kind_cases[_i].filename, "fn", 1};
    ck_assert_msg(sd_attrib_classify(a, &f) == kind_cases[_i].want, "%s: got %s, want %s",
                  kind_cases[_i].filename, sd_frame_kind_name(sd_attrib_classify(a, &f)),
                  sd_frame_kind_name(kind_cases[_i].want));
    sd_attrib_free(a);
}
END_TEST

static const struct {
    const char *filename, *want;
} short_cases[] = {
    {VENV "/torch/nn/modules/linear.py", "torch/nn/modules/linear.py"},
    {VENV "/einops/_backends.py", "einops/_backends.py"},
    {"/usr/local/lib/python3.10/dist-packages/vllm/utils.py", "vllm/utils.py"},
    {"/src/pytorch/torch/optim/sgd.py", "torch/optim/sgd.py"},
    {"/usr/lib/python3.11/threading.py", "threading.py"},
    {"C:\\Python311\\Lib\\copy.py", "copy.py"},
    {"C:\\venv\\Lib\\site-packages\\torch\\nn\\module.py", "torch\\nn\\module.py"},
    {"/home/u/proj/train.py", "/home/u/proj/train.py"},
    {"??", "??"},
};

START_TEST(short_path_table)
{
    ck_assert_str_eq(sd_frame_short_path(short_cases[_i].filename), short_cases[_i].want);
}
END_TEST

START_TEST(noise_filter)
{
    sd_frame noisy[] = {{"??", "torch::unwind::unwind()", 0},
                        {"??", "_PyEval_EvalFrameDefault", 0},
                        {"/x/Python/ceval.c", "f", 1},
                        {"RegisterCUDA.cpp", "f", 0} /* no slash: not "/Register" */};
    ck_assert(sd_frame_is_noise(&noisy[0]));
    ck_assert(sd_frame_is_noise(&noisy[1]));
    ck_assert(sd_frame_is_noise(&noisy[2]));
    ck_assert(!sd_frame_is_noise(&noisy[3]));
}
END_TEST

/* ---------- sites, via and keys ---------- */

static const sd_frame F_CPP = {"??", "at::empty", 0};
static const sd_frame F_CEVAL = {"??", "_PyEval_EvalFrameDefault", 0};
static const sd_frame F_TORCH_FN = {VENV "/torch/functional.py", "einsum", 386};
static const sd_frame F_BACKEND = {VENV "/einops/_backends.py", "einsum", 288};
static const sd_frame F_EINOPS = {VENV "/einops/einops.py", "einsum", 907};
static const sd_frame F_LINEAR = {VENV "/torch/nn/modules/linear.py", "forward", 116};
static const sd_frame F_CALL = {VENV "/torch/nn/modules/module.py", "_call_impl", 1527};
static const sd_frame F_MODEL = {"/p/model.py", "forward", 44};
static const sd_frame F_STEP = {"/p/train.py", "step", 88};
static const sd_frame F_MAIN = {"/p/train.py", "main", 130};
static const sd_frame F_THREAD = {"/usr/lib/python3.11/threading.py", "run", 975};

static const struct {
    const sd_frame *frames[8];
    size_t n;
    int site, via;
    bool is_user;
} site_cases[] = {
    {{0}, 0, -1, -1, false},
    {{&F_CPP}, 1, 0, -1, false},
    /* C++ only: the innermost frame that is not noise */
    {{&F_CEVAL, &F_CPP}, 2, 1, -1, false},
    {{&F_CEVAL}, 1, 0, -1, false},
    {{&F_CPP, &F_STEP, &F_MAIN}, 3, 1, -1, true},
    /* via prefers the innermost non-torch library frame */
    {{&F_CPP, &F_TORCH_FN, &F_BACKEND, &F_CEVAL, &F_EINOPS, &F_STEP}, 6, 5, 2, true},
    /* only torch below: its innermost .py frame */
    {{&F_CPP, &F_LINEAR, &F_CALL, &F_MODEL, &F_CALL, &F_STEP}, 6, 3, 1, true},
    /* no user frame: first .py outside torch, torch below it is via */
    {{&F_CPP, &F_LINEAR, &F_THREAD, &F_CALL}, 4, 2, 1, false},
    /* torch only: the innermost .py frame */
    {{&F_CPP, &F_CALL, &F_LINEAR}, 3, 1, -1, false},
};

START_TEST(site_table)
{
    sd_attrib_options o = {0};
    sd_error err;
    sd_error_clear(&err);
    sd_attrib *a = sd_attrib_create(&o, &err);
    sd_site s;
    sd_attrib_site(a, site_cases[_i].frames, site_cases[_i].n, &s);
    ck_assert_int_eq(s.site, site_cases[_i].site);
    ck_assert_int_eq(s.via, site_cases[_i].via);
    ck_assert_int_eq(s.is_user, site_cases[_i].is_user);
    sd_attrib_free(a);
}
END_TEST

static const sd_frame *const KEY_STACK[] = {&F_CPP, &F_CEVAL, &F_LINEAR, &F_CALL, &F_MODEL,
                                            &F_CALL, &F_STEP, &F_CEVAL, &F_MAIN};

static void key_of(sd_group_by by, int depth, char *buf, size_t size)
{
    sd_attrib_options o = {.group_by = by, .depth = depth};
    sd_error err;
    sd_error_clear(&err);
    sd_attrib *a = sd_attrib_create(&o, &err);
    ck_assert_ptr_nonnull(a);
    size_t n = sd_attrib_key(a, KEY_STACK, LEN(KEY_STACK), buf, size);
    ck_assert_uint_eq(n, strlen(buf));
    sd_attrib_free(a);
}

START_TEST(keys)
{
    char k[1024];
    key_of(SD_GROUP_SITE, 0, k, sizeof k);
    ck_assert_str_eq(k, "/p/model.py:44 forward");
    key_of(SD_GROUP_SITE, 1, k, sizeof k);
    ck_assert_str_eq(k, "/p/model.py:44 forward <- /p/train.py:88 step");
    key_of(SD_GROUP_SITE, 5, k, sizeof k);
    ck_assert_str_eq(k, "/p/model.py:44 forward <- /p/train.py:88 step <- /p/train.py:130 main");
    key_of(SD_GROUP_LEAF, 0, k, sizeof k);
    ck_assert_str_eq(k, "??:0 at::empty");
    key_of(SD_GROUP_FILE, 0, k, sizeof k);
    ck_assert_str_eq(k, "/p/model.py");
    key_of(SD_GROUP_FUNCTION, 0, k, sizeof k);
    ck_assert_str_eq(k, "/p/model.py forward");
    key_of(SD_GROUP_STACK, 0, k, sizeof k);
    ck_assert_str_eq(k, "??:0 at::empty;" VENV "/torch/nn/modules/linear.py:116 forward;" VENV
                        "/torch/nn/modules/module.py:1527 _call_impl;/p/model.py:44 forward;" VENV
                        "/torch/nn/modules/module.py:1527 _call_impl;/p/train.py:88 step;"
                        "/p/train.py:130 main");
}
END_TEST

START_TEST(key_cut_like_snprintf)
{
    sd_attrib_options o = {0};
    sd_error err;
    sd_error_clear(&err);
    sd_attrib *a = sd_attrib_create(&o, &err);
    char small[8];
    size_t n = sd_attrib_key(a, KEY_STACK, LEN(KEY_STACK), small, sizeof small);
    ck_assert_uint_eq(n, strlen("/p/model.py:44 forward"));
    ck_assert_str_eq(small, "/p/mode");
    ck_assert_uint_eq(sd_attrib_key(a, NULL, 0, small, sizeof small), strlen(SD_NO_STACK));
    ck_assert_str_eq(small, "<no sta");
    sd_attrib_free(a);
}
END_TEST

START_TEST(hide_show_focus)
{
    const char *hide[] = {"model\\.py:44"}, *show[] = {"einops/", "model\\.py"};
    const char *focus[] = {"^/p/train\\.py:88 step$"};
    sd_attrib_options o = {.hide = hide, .n_hide = 1, .show = show, .n_show = 2,
                           .focus = focus, .n_focus = 1};
    sd_error err;
    sd_error_clear(&err);
    sd_attrib *a = sd_attrib_create(&o, &err);
    ck_assert_ptr_nonnull(a);
    ck_assert(sd_attrib_classify(a, &F_MODEL) == SD_FRAME_HIDDEN);   /* hide wins */
    ck_assert(sd_attrib_classify(a, &F_EINOPS) == SD_FRAME_USER);    /* shown */
    ck_assert(sd_attrib_classify(a, &F_LINEAR) == SD_FRAME_TORCH);
    ck_assert(sd_attrib_frame_focused(a, &F_STEP));
    ck_assert(!sd_attrib_frame_focused(a, &F_MAIN));
    char k[256];
    sd_attrib_key(a, KEY_STACK, LEN(KEY_STACK), k, sizeof k);
    ck_assert_str_eq(k, "/p/train.py:88 step");   /* model.py hidden: the caller */
    sd_attrib_free(a);
}
END_TEST

START_TEST(bad_pattern)
{
    const char *bad[] = {"ok", "(unclosed"};
    sd_attrib_options o = {.focus = bad, .n_focus = 2};
    sd_error err;
    sd_error_clear(&err);
    ck_assert_ptr_null(sd_attrib_create(&o, &err));
    ck_assert_int_eq(err.code, SD_EUSAGE);
    ck_assert_ptr_nonnull(strstr(err.text, "(unclosed"));
}
END_TEST

/* ---------- diffs of the fixtures ---------- */

/* Through the one parse path every loader ends in: bytes in memory. */
static sd_snapshot *load(const char *name)
{
    return sdp_test_load_ok("%s/%s", SNAPDIFF_TESTDATA, name);
}

static sd_diff *diff_of(const sd_snapshot *a, const sd_snapshot *b, uint64_t steps,
                        uint64_t capacity)
{
    sd_diff_options o = {.steps = steps, .capacity = capacity};
    sd_error err;
    sd_error_clear(&err);
    sd_diff *d = sd_diff_create(a, b, &o, &err);
    ck_assert_msg(d != NULL, "%s", err.text);
    return d;
}

static int64_t group_delta_sum(const sd_diff *d)
{
    int64_t sum = 0;
    for (size_t i = 0; i < sd_diff_group_count(d); i++) sum += sd_diff_group_at(d, i)->delta_bytes;
    return sum;
}

/* Figures from testdata/leak/expected.json ("churn"), worked out in make_leak_fixtures.py. */
START_TEST(churn_leak_is_top)
{
    sd_snapshot *o = load("leak/churn_old.pickle"), *n = load("leak/churn_new.pickle");
    sd_diff *d = diff_of(o, n, 50, 1ull << 30);
    const sd_diff_totals *t = sd_diff_totals_of(d);
    ck_assert_uint_eq(t->old_stats.allocated_bytes, 137102848u);
    ck_assert_uint_eq(t->new_stats.allocated_bytes, 139856896u);
    ck_assert_int_eq(t->per_step, 55080);
    ck_assert(t->has_steps_to_capacity);
    ck_assert_uint_eq(t->steps_to_capacity, 16956);
    ck_assert_uint_eq(t->blocks.kept, 131);
    ck_assert_uint_eq(t->blocks.added, 61);
    ck_assert_uint_eq(t->blocks.freed, 7);
    ck_assert_int_eq(group_delta_sum(d), 2754048);
    ck_assert_uint_eq(sd_diff_growth_count(d), 4);
    ck_assert_uint_eq(sd_diff_shrink_count(d), 2);
    ck_assert_uint_eq(sd_diff_group_count(d), 9);
    const sd_diff_group *g = sd_diff_group_at(d, 0);
    ck_assert_str_eq(g->key, "/home/alice/proj/metrics.py:23 update");
    ck_assert_int_eq(g->delta_bytes, 3276800);
    ck_assert_int_eq(g->delta_blocks, 50);
    ck_assert(g->rep_snapshot == n);
    ck_assert(g->rep_site.is_user);
    ck_assert_int_eq(g->rep_site.via, -1);
    /* The most negative shrinking group comes right after the growth, ties by key. */
    ck_assert_str_eq(sd_diff_group_at(d, 4)->key, "/home/alice/proj/model.py:44 forward");
    ck_assert_str_eq(sd_diff_group_at(d, 5)->key, "/home/alice/proj/model.py:71 forward");
    ck_assert(sd_diff_group_at(d, 5)->rep_snapshot == o);   /* nothing left in new */
    sd_diff_free(d);
    sd_snapshot_free(n);
    sd_snapshot_free(o);
}
END_TEST

START_TEST(self_diff_is_zero)
{
    sd_snapshot *s = load("leak/churn_new.pickle");
    sd_diff *d = diff_of(s, s, 10, 1ull << 30);
    const sd_diff_totals *t = sd_diff_totals_of(d);
    ck_assert_uint_eq(sd_diff_growth_count(d), 0);
    ck_assert_uint_eq(sd_diff_shrink_count(d), 0);
    ck_assert_uint_eq(t->blocks.added + t->blocks.freed, 0);
    ck_assert_uint_eq(t->blocks.kept, 192);
    ck_assert_int_eq(t->per_step, 0);
    ck_assert(!t->has_steps_to_capacity);
    sd_diff_free(d);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(address_churn_is_not_growth)
{
    sd_snapshot *o = load("leak/move_old.pickle"), *n = load("leak/move_new.pickle");
    sd_diff *d = diff_of(o, n, 0, 0);
    ck_assert_uint_eq(sd_diff_growth_count(d), 0);
    ck_assert_uint_eq(sd_diff_shrink_count(d), 0);
    ck_assert_uint_eq(sd_diff_totals_of(d)->blocks.kept, 0);
    ck_assert_uint_eq(sd_diff_totals_of(d)->blocks.added, 12);
    ck_assert(!sd_diff_totals_of(d)->has_per_step);
    sd_diff_free(d);
    sd_snapshot_free(n);
    sd_snapshot_free(o);
}
END_TEST

START_TEST(oom_capacity_estimate)
{
    sd_snapshot *o = load("leak/churn_old.pickle"), *n = load("leak/churn_new_oom.pickle");
    sd_diff *d = diff_of(o, n, 50, 0);
    const sd_diff_device *dd = sd_diff_device_at(d, 0);
    ck_assert_int_eq(dd->capacity_source, SD_CAPACITY_OOM);
    /* 512 MiB free at the OOM + 156 MiB reserved (expected.json: oom_capacity) */
    ck_assert_uint_eq(dd->capacity, 700448768u);
    ck_assert_uint_eq(sd_diff_totals_of(d)->steps_to_capacity, 10178);
    sd_diff_free(d);
    sd_snapshot_free(n);
    sd_snapshot_free(o);
}
END_TEST

START_TEST(devices_on_one_side)
{
    sd_snapshot *o = load("leak/multidev_old.pickle"), *n = load("leak/multidev_new.pickle");
    sd_diff *d = diff_of(o, n, 0, 0);
    ck_assert_uint_eq(sd_diff_device_count(d), 3);
    const sd_diff_device *d1 = sd_diff_device_at(d, 1), *d2 = sd_diff_device_at(d, 2);
    ck_assert(d1->device == 1 && d1->in_old && !d1->in_new);
    ck_assert(d2->device == 2 && !d2->in_old && d2->in_new);
    ck_assert_uint_eq(d1->blocks.freed, 1);
    ck_assert_uint_eq(d2->blocks.added, 1);
    ck_assert_uint_eq(sd_diff_device_at(d, 0)->blocks.kept, 2);
    ck_assert_int_eq(group_delta_sum(d), -1048576);
    sd_diff_free(d);
    sd_snapshot_free(n);
    sd_snapshot_free(o);
}
END_TEST

/* The folded lines of a diff's profile, rendered to memory: their byte sum; each line's
 * bytes > 0 and the lines sorted by stack text. */
static uint64_t folded_sum(const sd_diff *d)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    sd_stacks *st = sd_stacks_create(sd_diff_profile(d), 0, 1, SD_STACKS_FOLDED, 0, NULL);
    ck_assert_ptr_nonnull(st);
    ck_assert_int_eq(sd_render_diff_folded(f, st, NULL), SD_OK);
    /* the renderer draws the form it is given, and refuses another */
    sd_stacks *frames = sd_stacks_create(sd_diff_profile(d), 0, 1, SD_STACKS_FRAMES, 0, NULL);
    ck_assert_ptr_nonnull(frames);
    ck_assert_uint_eq(sd_stacks_count(frames) > 0, sd_stacks_count(st) > 0);
    sd_error err;
    ck_assert_int_eq(sd_render_diff_folded(f, frames, &err), SD_EUSAGE);
    ck_assert_ptr_null(sd_stacks_create(sd_diff_profile(d), 0, 7, SD_STACKS_FOLDED, 0, &err));
    ck_assert_int_eq(err.code, SD_EUSAGE);
    sd_stacks_free(frames);
    sd_stacks_free(st);
    fclose(f);
    uint64_t sum = 0;
    const char *prev = NULL;
    size_t prev_len = 0;
    for (char *line = text; *line;) {
        char *nl = strchr(line, '\n');
        ck_assert_ptr_nonnull(nl);
        char *sp = nl;
        while (sp > line && *sp != ' ') sp--;
        unsigned long long bytes = strtoull(sp + 1, NULL, 10);
        ck_assert(bytes > 0);
        sum += bytes;
        size_t n = (size_t)(sp - line);
        if (prev) {
            int c = memcmp(prev, line, prev_len < n ? prev_len : n);
            ck_assert(c < 0 || (c == 0 && prev_len < n));
        }
        prev = line;
        prev_len = n;
        line = nl + 1;
    }
    free(text);
    return sum;
}

START_TEST(folded_sums)
{
    sd_snapshot *o = load("leak/churn_old.pickle"), *n = load("leak/churn_new.pickle");
    sd_diff *alone = diff_of(NULL, n, 0, 0);
    ck_assert_uint_eq(folded_sum(alone), 139856896u);
    sd_diff *d = diff_of(o, n, 0, 0);
    /* growth lines: leak 3,276,800 + grads 1,048,576 + einsum 524,288 + loss 1,536, and the
     * activations, whose 5 new blocks have the stack of the 6 old ones: -1 MiB, not shown. */
    ck_assert_uint_eq(folded_sum(d), 3276800u + 1048576u + 524288u + 1536u);
    sd_diff_free(d);
    sd_diff_free(alone);
    sd_snapshot_free(n);
    sd_snapshot_free(o);
}
END_TEST

START_TEST(memory_budget)
{
    sd_snapshot *o = load("leak/churn_old.pickle"), *n = load("leak/churn_new.pickle");
    for (uint64_t budget = 64; budget < (1u << 20); budget *= 2) {
        sd_diff_options opts = {.max_memory = budget};
        sd_error err;
        sd_error_clear(&err);
        sd_diff *d = sd_diff_create(o, n, &opts, &err);
        if (d) {
            ck_assert_int_eq(group_delta_sum(d), 2754048);
            sd_diff_free(d);
            break;
        }
        ck_assert_int_eq(err.code, SD_ENOMEM);
    }
    sd_snapshot_free(n);
    sd_snapshot_free(o);
}
END_TEST

START_TEST(legacy_layout)
{
    sd_snapshot *o = load("leak/legacy_old.pickle"), *n = load("leak/legacy_new.pickle");
    sd_diff *d = diff_of(o, n, 6, 0);
    const sd_diff_group *g = sd_diff_group_at(d, 0);
    ck_assert_str_eq(g->key, "/home/alice/proj/metrics.py:23 update");
    ck_assert_int_eq(g->delta_bytes, 6 * 128 * 1024);
    ck_assert_int_eq(sd_diff_totals_of(d)->per_step, 128 * 1024);
    ck_assert_uint_eq(sd_diff_totals_of(d)->blocks.kept, 6);   /* 2 act + 1 no-stack + 3 */
    sd_diff_free(d);
    sd_snapshot_free(n);
    sd_snapshot_free(o);
}
END_TEST

/* ---------- issue 8: NULL errors, the profile, verdicts, the gate, the loader ---------- */

/* sd_diff_create accepts a NULL error pointer at every budget (it crashed at small ones). */
START_TEST(null_error_tight_budget)
{
    sd_snapshot *o = load("leak/churn_old.pickle"), *n = load("leak/churn_new.pickle");
    bool made = false;
    for (uint64_t budget = 1; budget < (1u << 22) && !made; budget = budget * 3 / 2 + 1) {
        sd_diff_options opts = {.max_memory = budget};
        sd_diff *d = sd_diff_create(o, n, &opts, NULL);
        made = d != NULL;
        if (d) ck_assert_int_eq(group_delta_sum(d), 2754048);
        sd_diff_free(d);
    }
    ck_assert(made);
    const sd_snapshot *sides[] = {o, n};
    sd_profile_options po = {.max_memory = 256};
    ck_assert_ptr_null(sd_profile_create(sides, 2, &po, NULL));
    ck_assert_ptr_null(sd_diff_create(o, NULL, &(sd_diff_options){0}, NULL));
    sd_snapshot_free(n);
    sd_snapshot_free(o);
}
END_TEST

static uint64_t live_bytes(const sd_snapshot *s, bool requested)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < sd_snapshot_device_count(s); i++) {
        const sd_cuda_device *dev = sd_snapshot_device(s, i);
        for (size_t k = 0; k < dev->n_blocks; k++)
            if (dev->blocks[k].state == SD_BLOCK_ALLOCATED)
                sum += requested ? dev->blocks[k].requested_size : dev->blocks[k].size;
    }
    return sum;
}

/* Three sides, the middle one absent: stacks and keys add up per side. */
START_TEST(profile_sides_add_up)
{
    sd_snapshot *o = load("leak/churn_old.pickle"), *n = load("leak/churn_new.pickle");
    const sd_snapshot *sides[] = {o, NULL, n};
    sd_profile_options po = {0};
    sd_error err;
    sd_error_clear(&err);
    sd_profile *p = sd_profile_create(sides, 3, &po, &err);
    ck_assert_msg(p != NULL, "%s", err.text);
    ck_assert_uint_eq(sd_profile_side_count(p), 3);
    ck_assert_ptr_null(sd_profile_snapshot(p, 1));
    ck_assert_uint_eq(sd_profile_stack_count(p, 1), 0);
    ck_assert_uint_eq(sd_profile_key_count(p), 9);   /* the diff's groups */
    for (size_t w = 0; w < 3; w++) {
        uint64_t stacks = 0, key_sum = 0, req = 0;
        for (uint32_t s = 0; s < sd_profile_stack_count(p, w); s++) {
            stacks += sd_profile_stack(p, w, s)->bytes;
            req += sd_profile_stack(p, w, s)->requested;
            if (sd_profile_stack(p, w, s)->blocks)
                ck_assert_uint_lt(sd_profile_stack_key(p, w, s), sd_profile_key_count(p));
        }
        for (size_t k = 0; k < sd_profile_key_count(p); k++)
            key_sum += sd_profile_key_at(p, k)->sides[w].bytes;
        uint64_t want = sides[w] ? live_bytes(sides[w], false) : 0;
        ck_assert_uint_eq(stacks, want);
        ck_assert_uint_eq(key_sum, want);
        ck_assert_uint_eq(sd_profile_total(p, w)->bytes, want);
        ck_assert_uint_eq(req, sides[w] ? live_bytes(sides[w], true) : 0);
    }
    /* The representative comes from the last side that holds the key. */
    for (size_t k = 0; k < sd_profile_key_count(p); k++) {
        const sd_profile_key *key = sd_profile_key_at(p, k);
        ck_assert(key->has_rep);
        ck_assert_uint_eq(key->rep_side, key->sides[2].bytes ? 2 : 0);
        ck_assert(sd_profile_stack(p, key->rep_side, key->rep_stack)->bytes > 0);
    }
    sd_profile_free(p);
    sd_snapshot_free(n);
    sd_snapshot_free(o);
}
END_TEST

START_TEST(group_by_names)
{
    static const char *const want[] = {"site", "leaf", "stack", "file", "function",
                                        "annotation", "compile-context"};
    ck_assert_int_eq(SD_GROUP_BY_COUNT, LEN(want));
    for (int i = 0; i < SD_GROUP_BY_COUNT; i++) {
        sd_group_by by;
        ck_assert_str_eq(sd_group_by_name((sd_group_by)i), want[i]);
        ck_assert(sd_group_by_parse(want[i], &by));
        ck_assert_int_eq(by, i);
    }
    sd_group_by by;
    ck_assert(!sd_group_by_parse("line", &by));
    ck_assert_ptr_null(sd_group_by_name(SD_GROUP_BY_COUNT));
}
END_TEST

/* The verdicts are data: deltas, the sum check, the outlook and its device. */
START_TEST(diff_verdicts)
{
    sd_snapshot *o = load("leak/churn_old.pickle"), *n = load("leak/churn_new.pickle");
    sd_diff *d = diff_of(o, n, 50, 1ull << 30);
    const sd_diff_totals *t = sd_diff_totals_of(d);
    ck_assert_int_eq(t->delta.allocated, 2754048);
    ck_assert_int_eq(t->groups_delta, 2754048);
    ck_assert_int_eq(t->sum_check, SD_SUM_EXACT);
    ck_assert_int_eq(t->outlook, SD_OUTLOOK_REACHED);
    ck_assert_uint_eq(t->capacity_device, 0);
    ck_assert_uint_eq(t->steps, 50);
    ck_assert_int_eq(sd_diff_device_at(d, 0)->delta.allocated, 2754048);
    sd_diff_free(d);
    d = diff_of(o, n, 50, 0);
    ck_assert_int_eq(sd_diff_totals_of(d)->outlook, SD_OUTLOOK_NO_CAPACITY);
    sd_diff_free(d);
    d = diff_of(o, n, 0, 0);
    ck_assert_int_eq(sd_diff_totals_of(d)->outlook, SD_OUTLOOK_NO_STEPS);
    sd_diff_free(d);
    d = diff_of(n, o, 50, 1ull << 30);
    ck_assert_int_eq(sd_diff_totals_of(d)->outlook, SD_OUTLOOK_NOT_GROWING);
    sd_diff_free(d);
    d = diff_of(o, n, 50, 1u << 20);
    ck_assert_int_eq(sd_diff_totals_of(d)->outlook, SD_OUTLOOK_FULL);
    sd_diff_free(d);
    const char *focus[] = {"metrics"};
    sd_diff_options fo = {.attrib = {.focus = focus, .n_focus = 1}};
    d = sd_diff_create(o, n, &fo, NULL);
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(sd_diff_totals_of(d)->sum_check, SD_SUM_FOCUS);
    ck_assert_int_eq(sd_diff_totals_of(d)->groups_delta, 3276800);
    sd_diff_free(d);
    sd_snapshot_free(n);
    sd_snapshot_free(o);
}
END_TEST

START_TEST(gate_limits)
{
    sd_snapshot *o = load("leak/churn_old.pickle"), *n = load("leak/churn_new.pickle");
    sd_diff *d = diff_of(o, n, 0, 0);
    sd_limits *lim = sd_limits_create();
    ck_assert_ptr_nonnull(lim);
    sd_gate g;
    ck_assert_int_eq(sd_gate_diff(d, lim, &g), SD_OK);     /* none asked for */
    ck_assert(g.pass);
    ck_assert_uint_eq(g.n_results, 0);
    ck_assert_ptr_null(sd_gate_result(&g, SD_LIMIT_MAX_GROWTH));
    sd_gate_release(&g);
    ck_assert_int_eq(sd_gate_diff(d, NULL, &g), SD_OK);
    ck_assert(g.pass && g.n_results == 0);
    sd_gate_release(&g);
    ck_assert(sd_limits_set(lim, SD_LIMIT_MAX_GROWTH, 2754048, 0));
    ck_assert_int_eq(sd_gate_diff(d, lim, &g), SD_OK);
    ck_assert(g.pass);
    ck_assert_uint_eq(g.n_results, 1);
    ck_assert_str_eq(g.results[0].name, "max-growth");
    ck_assert_str_eq(sd_limit_name(SD_LIMIT_MAX_GROWTH), "max-growth");
    ck_assert_int_eq(g.results[0].measured, 2754048);
    const sd_limit_result *r = sd_gate_result(&g, SD_LIMIT_MAX_GROWTH);
    ck_assert(r && r->limit == 2754048);
    ck_assert_ptr_null(sd_gate_result(&g, SD_LIMIT_MAX_RESERVED));
    ck_assert_ptr_null(sd_gate_result(&g, SD_LIMIT_COUNT));   /* past the table: none */
    sd_gate_release(&g);
    sd_limits_set(lim, SD_LIMIT_MAX_GROWTH, 2754047, 0);
    ck_assert_int_eq(sd_gate_diff(d, lim, &g), SD_OK);
    ck_assert(!g.pass && !g.results[0].pass);
    sd_gate_release(&g);
    sd_diff_free(d);
    d = diff_of(n, o, 0, 0);   /* shrinking passes any limit, 0 included */
    sd_limits_set(lim, SD_LIMIT_MAX_GROWTH, 0, 0);
    ck_assert_int_eq(sd_gate_diff(d, lim, &g), SD_OK);
    ck_assert(g.pass);
    sd_gate_release(&g);
    sd_limits_free(lim);
    sd_diff_free(d);
    sd_snapshot_free(n);
    sd_snapshot_free(o);
}
END_TEST

/* Results come back per input, in order; a failure is reported where it happened. */
START_TEST(loader_in_order)
{
    char a[512], b[512], c[512], dir[512];
    snprintf(a, sizeof a, "%s/leak/churn_old.pickle", SNAPDIFF_TESTDATA);
    snprintf(b, sizeof b, "%s/leak/does_not_exist.pickle", SNAPDIFF_TESTDATA);
    snprintf(c, sizeof c, "%s/leak/churn_new.pickle", SNAPDIFF_TESTDATA);
    snprintf(dir, sizeof dir, "%s/leak", SNAPDIFF_TESTDATA);
    const char *specs[] = {a, b, c, c, a};
    for (unsigned jobs = 0; jobs <= 3; jobs++) {
        sd_loaded res[LEN(specs)];
        sd_loader_options lo = {.jobs = jobs};
        ck_assert_int_ne(sd_load_all(specs, LEN(specs), &lo, res), SD_OK);
        ck_assert_int_eq(res[1].status, SD_EIO);
        for (size_t i = 0; i < LEN(specs); i++) {
            if (i == 1) continue;
            ck_assert_int_eq(res[i].status, SD_OK);
            ck_assert_uint_eq(res[i].n_snaps, 1);
            ck_assert_str_eq(res[i].spec, specs[i]);
            ck_assert_uint_eq(live_bytes(res[i].snaps[0], false),
                              i == 0 || i == 4 ? 137102848u : 139856896u);
        }
        sd_loaded_free(res, LEN(specs));
    }
    /* A directory holds many snapshots: ambiguous unless every member is wanted. */
    const char *one[] = {dir};
    sd_loaded r;
    sd_loader_options lo = {.jobs = 2, .max_memory = 1ull << 30};
    ck_assert_int_ne(sd_load_all(one, 1, &lo, &r), SD_OK);
    ck_assert(r.ambiguous);
    ck_assert_uint_gt(r.n_members, 1);
    ck_assert_uint_eq(r.n_snaps, 0);
    sd_loaded_free(&r, 1);
    /* Every member: expected.json beside them is no pickle, so it is left out and named. */
    lo.all_members = true;
    ck_assert_int_eq(sd_load_all(one, 1, &lo, &r), SD_OK);
    ck_assert(!r.ambiguous);
    ck_assert_uint_eq(r.n_snaps, r.n_members);
    ck_assert_uint_eq(r.n_skipped, 1);
    ck_assert_str_eq(r.skipped, "expected.json (JSON)");
    for (size_t k = 0; k < r.n_snaps; k++) ck_assert_ptr_nonnull(r.snaps[k]);
    sd_loaded_free(&r, 1);
    ck_assert_uint_ge(sd_loader_default_jobs(), 1);
}
END_TEST

static Suite *diff_suite(void)
{
    Suite *s = suite_create("diff");
    TCase *tc = tcase_create("attrib");
    tcase_add_loop_test(tc, classify_table, 0, LEN(kind_cases));
    tcase_add_loop_test(tc, short_path_table, 0, LEN(short_cases));
    tcase_add_test(tc, noise_filter);
    tcase_add_loop_test(tc, site_table, 0, LEN(site_cases));
    tcase_add_test(tc, keys);
    tcase_add_test(tc, key_cut_like_snprintf);
    tcase_add_test(tc, hide_show_focus);
    tcase_add_test(tc, bad_pattern);
    suite_add_tcase(s, tc);
    TCase *td = tcase_create("diff");
    tcase_add_test(td, churn_leak_is_top);
    tcase_add_test(td, self_diff_is_zero);
    tcase_add_test(td, address_churn_is_not_growth);
    tcase_add_test(td, oom_capacity_estimate);
    tcase_add_test(td, devices_on_one_side);
    tcase_add_test(td, folded_sums);
    tcase_add_test(td, memory_budget);
    tcase_add_test(td, legacy_layout);
    suite_add_tcase(s, td);
    TCase *tp = tcase_create("profile_gate_loader");
    tcase_add_test(tp, null_error_tight_budget);
    tcase_add_test(tp, profile_sides_add_up);
    tcase_add_test(tp, group_by_names);
    tcase_add_test(tp, diff_verdicts);
    tcase_add_test(tp, gate_limits);
    tcase_add_test(tp, loader_in_order);
    suite_add_tcase(s, tp);
    return s;
}

int main(void) { return sdp_test_main(diff_suite); }
