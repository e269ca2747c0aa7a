/* ranks.c - pairing the members of two rank archives, and the spread across ranks
 * (ranks.h). */
#include <ctype.h>
#include <stdio.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "snapdiff/ranks.h"
#include "snapdiff/stats.h"

/* ---------- the frameworks' names (ranks.h) ---------- */

struct sd_name_pattern {
    sdp_named_regex nr;
    int rank, step, oom;           /* their groups, 0 when not named */
};

sd_name_pattern *sd_name_pattern_create(const char *regex, sd_error *err)
{
    sd_error_clear(err);
    sd_name_pattern *p = calloc(1, sizeof *p);
    if (!p) {
        sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        return NULL;
    }
    if (sdp_named_regex_compile(regex, "--name-pattern", &p->nr, err) != SD_OK) {
        free(p);
        return NULL;
    }
    p->rank = sdp_named_regex_group(&p->nr, "rank");
    p->step = sdp_named_regex_group(&p->nr, "step");
    p->oom = sdp_named_regex_group(&p->nr, "oom");
    for (size_t g = 1; g <= p->nr.n_groups; g++) {
        const char *n = p->nr.name[g];
        if (n[0] && strcmp(n, "rank") != 0 && strcmp(n, "step") != 0 && strcmp(n, "oom") != 0) {
            sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "--name-pattern: unknown group name '%s' "
                     "(rank, step, oom)", n);
            sd_name_pattern_free(p);
            return NULL;
        }
    }
    if (!p->rank && !p->step) {
        sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "--name-pattern: name a group (?P<rank>...) "
                 "or (?P<step>...)");
        sd_name_pattern_free(p);
        return NULL;
    }
    return p;
}

void sd_name_pattern_free(sd_name_pattern *p)
{
    if (!p) return;
    regfree(&p->nr.re);
    free(p);
}

const char *sd_job_layout_name(sd_job_layout layout)
{
    switch (layout) {
    case SD_JOB_TORCHTITAN: return "torchtitan";
    case SD_JOB_MEGATRON_LM: return "Megatron-LM";
    case SD_JOB_MEGATRON_BRIDGE: return "Megatron-Bridge";
    case SD_JOB_VERL: return "verl";
    case SD_JOB_PATTERN: return "--name-pattern";
    case SD_JOB_NONE: break;
    }
    return NULL;
}

/* s past the literal `lit`, or NULL. */
static const char *past(const char *s, const char *lit)
{
    size_t n = strlen(lit);
    return s && strncmp(s, lit, n) == 0 ? s + n : NULL;
}

/* s past a run of digits (read into *v, capped), or NULL when none. */
static const char *past_number(const char *s, int64_t *v)
{
    if (!s || !isdigit((unsigned char)*s)) return NULL;
    int64_t x = 0;
    for (; isdigit((unsigned char)*s); s++)
        if (x < 100000000) x = x * 10 + (*s - '0');
    *v = x;
    return s;
}

static bool is_end(const char *s, const char *ext) { return s && strcmp(s, ext) == 0; }

/* The last component of a path, and the one before it (copied into dir; "" when none). A
 * member of an archive ("job.zip:iteration_2/rank0...") splits at ':' too. */
static const char *split_path(const char *name, char *dir, size_t size)
{
    const char *base = name, *prev = NULL;
    for (const char *p = name; *p; p++)
        if (*p == '/' || *p == ':') {
            prev = base;
            base = p + 1;
        }
    size_t n = prev ? (size_t)(base - 1 - prev) : 0;
    if (n >= size) n = size - 1;
    memcpy(dir, prev ? prev : "", n);
    dir[n] = '\0';
    return base;
}

/* torchtitan, tools/profiling.py maybe_enable_memory_snapshot: MemoryProfiler.step writes
 * iteration_{step}/rank{rank}_memory_snapshot.pickle, or iteration_{step-1}_exit/ when
 * it is called at a torch.OutOfMemoryError. */
static bool read_torchtitan(const char *base, const char *dir, sd_job_name *j)
{
    const char *q = past_number(past(base, "rank"), &j->rank);
    if (!is_end(q, "_memory_snapshot.pickle")) return false;
    const char *d = past_number(past(dir, "iteration_"), &j->step);
    if (d && is_end(d, "_exit")) j->oom = true;
    else if (!d || *d) j->step = -1;
    j->layout = SD_JOB_TORCHTITAN;
    return true;
}

/* verl's torch_memory profiler: {save_path}/step{S}/torch_memory_rank{R}_pid{P}.pickle, and
 * torch_memory_oom_rank{R}_pid{P}.pickle from its OOM observer. */
static bool read_verl(const char *base, const char *dir, sd_job_name *j)
{
    const char *q = past(base, "torch_memory_");
    if (past(q, "oom_")) {
        j->oom = true;
        q += 4;
    }
    int64_t pid;
    q = past_number(past(past_number(past(q, "rank"), &j->rank), "_pid"), &pid);
    if (!is_end(q, ".pickle")) {
        j->oom = false;
        return false;
    }
    const char *d = past(dir, "step");
    if (d && *d == '_') d++;
    d = past_number(d ? d : dir, &j->step);
    if (!d || *d) j->step = -1;
    j->layout = SD_JOB_VERL;
    return true;
}

/* Megatron-LM, pretrain_gpt.py model_provider: with --record-memory-history its OOM
 * observer dumps oom_rank-{rank}_{args.memory_snapshot_path}. */
static bool read_megatron_lm(const char *base, sd_job_name *j)
{
    const char *q = past_number(past(base, "oom_rank-"), &j->rank);
    if (!q || *q != '_') return false;
    j->oom = true;
    j->layout = SD_JOB_MEGATRON_LM;
    return true;
}

/* Megatron-Bridge's memory_snapshot_path: the rank before the extension of
 * memory_snapshot_path (default snapshot.pickle): snapshot_{rank}.pickle, in later
 * versions {stem}_rank-{rank}.pickle, and {stem}_oom_rank-{rank}.pickle from its OOM
 * observer. The bare form is read only with the default stem: "snapshot_100.pickle" of a
 * user's own series is then a rank too, and --as-series says otherwise. */
static bool read_megatron_bridge(const char *base, sd_job_name *j)
{
    const char *at = strstr(base, "snapshot_");
    if (!at) return false;
    const char *q = at + strlen("snapshot_");
    bool oom = past(q, "oom_rank-") != NULL;
    if (oom) q += strlen("oom_rank-");
    else if (past(q, "rank-")) q += strlen("rank-");
    else if (at != base) return false;
    int64_t rank;
    if (!is_end(past_number(q, &rank), ".pickle")) return false;
    j->rank = rank;
    j->oom = oom;
    j->layout = SD_JOB_MEGATRON_BRIDGE;
    return true;
}

static bool read_pattern(const char *name, const sd_name_pattern *p, sd_job_name *j)
{
    regmatch_t m[SDP_REGEX_GROUPS + 1];
    if (regexec(&p->nr.re, name, p->nr.n_groups + 1, m, 0) != 0) return false;
    int64_t v;
    if (p->rank && m[p->rank].rm_so >= 0 && past_number(name + m[p->rank].rm_so, &v))
        j->rank = v;
    if (p->step && m[p->step].rm_so >= 0 && past_number(name + m[p->step].rm_so, &v))
        j->step = v;
    j->oom = p->oom && m[p->oom].rm_so >= 0;
    j->layout = SD_JOB_PATTERN;
    return true;
}

bool sd_job_name_read(const char *name, const sd_name_pattern *pattern, sd_job_name *out)
{
    *out = (sd_job_name){SD_JOB_NONE, -1, -1, false};
    if (pattern && read_pattern(name, pattern, out)) return true;
    *out = (sd_job_name){SD_JOB_NONE, -1, -1, false};
    char dir[256];
    const char *base = split_path(name, dir, sizeof dir);
    const sd_job_name none = *out;
    /* each reader may fill fields before it finds the name is not its own: reset between */
    if (read_torchtitan(base, dir, out)) return true;
    *out = none;
    if (read_verl(base, dir, out)) return true;
    *out = none;
    if (read_megatron_lm(base, out)) return true;
    *out = none;
    if (read_megatron_bridge(base, out)) return true;
    *out = none;
    return false;
}

/* The "rank" rule, for names no framework's layout explains. */
static int64_t rank_after_word(const char *name)
{
    int64_t found = -1;
    for (const char *p = name; *p; p++) {
        if (tolower((unsigned char)p[0]) != 'r' || tolower((unsigned char)p[1]) != 'a'
            || tolower((unsigned char)p[2]) != 'n' || tolower((unsigned char)p[3]) != 'k')
            continue;
        const char *q = p + 4;
        if (*q == '_' || *q == '-' || *q == '.') q++;
        if (!isdigit((unsigned char)*q)) continue;
        int64_t v = 0;
        for (; isdigit((unsigned char)*q) && v < 100000000; q++) v = v * 10 + (*q - '0');
        found = v;
    }
    return found;
}

int64_t sd_rank_of_name(const char *name)
{
    sd_job_name j;
    if (sd_job_name_read(name, NULL, &j) && j.rank >= 0) return j.rank;
    return rank_after_word(name);
}

/* Each name's rank, read once: pairing thousands of ranks compares them n^2 times.
 * NULL when out of memory: rank_at then reads them as it goes. */
static int64_t *ranks_of(const char *const *names, size_t n)
{
    int64_t *r = calloc(n ? n : 1, sizeof *r);
    for (size_t i = 0; r && i < n; i++) r[i] = sd_rank_of_name(names[i]);
    return r;
}

static int64_t rank_at(const int64_t *r, const char *const *names, size_t i)
{
    return r ? r[i] : sd_rank_of_name(names[i]);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Every name carries a rank, and no two the same (r: ranks_of(names), or NULL). */
static bool distinct_ranks_of(const int64_t *r, const char *const *names, size_t n)
{
    int64_t *sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted) {   /* the slow way, in no memory */
        for (size_t i = 0; i < n; i++) {
            int64_t x = rank_at(r, names, i);
            if (x < 0) return false;
            for (size_t k = 0; k < i; k++)
                if (rank_at(r, names, k) == x) return false;
        }
        return true;
    }
    for (size_t i = 0; i < n; i++) sorted[i] = rank_at(r, names, i);
    qsort(sorted, n, sizeof *sorted, cmp_i64);
    bool distinct = n == 0 || sorted[0] >= 0;
    for (size_t i = 1; i < n && distinct; i++) distinct = sorted[i] != sorted[i - 1];
    free(sorted);
    return distinct;
}

static bool distinct_ranks(const char *const *names, size_t n)
{
    int64_t *r = ranks_of(names, n);
    bool d = distinct_ranks_of(r, names, n);
    free(r);
    return d;
}

/* name with the digits of its rank number (the last "rank" that has them) taken out. */
static void without_rank(const char *name, char *out, size_t size)
{
    const char *cut = NULL, *end = NULL;
    for (const char *p = name; *p; p++) {
        if (tolower((unsigned char)p[0]) != 'r' || tolower((unsigned char)p[1]) != 'a'
            || tolower((unsigned char)p[2]) != 'n' || tolower((unsigned char)p[3]) != 'k')
            continue;
        const char *q = p + 4;
        if (*q == '_' || *q == '-' || *q == '.') q++;
        if (!isdigit((unsigned char)*q)) continue;
        cut = q;
        for (end = q; isdigit((unsigned char)*end); end++) {}
    }
    if (!cut) {
        snprintf(out, size, "%s", name);
        return;
    }
    snprintf(out, size, "%.*s#%s", (int)(cut - name), name, end);
}

/* Names of one framework's layout, at one step (or none), with no OOM dump among them: the
 * ranks of one job at one moment, whatever else differs (verl's pid). */
static bool one_step_of_a_job(const char *const *names, size_t n)
{
    sd_job_name first, j;
    if (!sd_job_name_read(names[0], NULL, &first) || first.oom) return false;
    for (size_t i = 1; i < n; i++)
        if (!sd_job_name_read(names[i], NULL, &j) || j.oom || j.layout != first.layout
            || j.step != first.step)
            return false;
    return true;
}

bool sd_ranks_names_are_ranks(const char *const *names, size_t n)
{
    if (n < 2 || !distinct_ranks(names, n)) return false;
    if (one_step_of_a_job(names, n)) return true;
    char first[1024], other[1024];
    without_rank(names[0], first, sizeof first);
    for (size_t i = 1; i < n; i++) {
        without_rank(names[i], other, sizeof other);
        if (strcmp(first, other) != 0) return false;
    }
    return true;
}

typedef struct pairing {
    const char *const *names[2];   /* OLD's, NEW's */
    int64_t *rank[2];              /* their ranks (ranks_of), or NULL */
    bool by_rank;
} pairing;

static bool same(const pairing *g, size_t k_old, size_t i_new)
{
    if (!g->by_rank) return strcmp(g->names[0][k_old], g->names[1][i_new]) == 0;
    return rank_at(g->rank[0], g->names[0], k_old) == rank_at(g->rank[1], g->names[1], i_new);
}

static int64_t pair_rank(const pairing *g, int side, size_t i)
{
    return g->by_rank ? rank_at(g->rank[side], g->names[side], i) : -1;
}

size_t sd_ranks_pair(const char *const *old_names, size_t n_old, const char *const *new_names,
                     size_t n_new, sd_rank_pair *pairs)
{
    size_t n = 0;
    if (n_old == 1 && n_new > 1) {   /* one baseline for every rank */
        for (size_t i = 0; i < n_new; i++)
            pairs[n++] = (sd_rank_pair){0, i, sd_rank_of_name(new_names[i])};
        return n;
    }
    pairing g = {{old_names, new_names}, {ranks_of(old_names, n_old), ranks_of(new_names, n_new)},
                 false};
    g.by_rank = distinct_ranks_of(g.rank[0], old_names, n_old)
                && distinct_ranks_of(g.rank[1], new_names, n_new);
    if (n_old == 1 && n_new == 1) {  /* two files: whatever their names */
        pairs[n++] = (sd_rank_pair){0, 0, pair_rank(&g, 1, 0)};
    } else {
        for (size_t i = 0; i < n_new; i++) {
            sd_rank_pair p = {SD_RANK_NONE, i, pair_rank(&g, 1, i)};
            for (size_t k = 0; k < n_old && p.old_index == SD_RANK_NONE; k++)
                if (same(&g, k, i)) p.old_index = k;
            pairs[n++] = p;
        }
        for (size_t k = 0; k < n_old; k++) {
            bool paired = false;
            for (size_t i = 0; i < n_new && !paired; i++) paired = same(&g, k, i);
            if (!paired) pairs[n++] = (sd_rank_pair){k, SD_RANK_NONE, pair_rank(&g, 0, k)};
        }
    }
    free(g.rank[0]);
    free(g.rank[1]);
    return n;
}

/* ---------- a job's folder by step and rank ---------- */

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A job's folder lists each file once: the same file given twice is the user's series. */
static bool distinct_names(const char *const *names, size_t n)
{
    const char **sorted = malloc(n * sizeof *sorted);
    if (!sorted) return false;
    memcpy(sorted, names, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, by_name);
    bool distinct = true;
    for (size_t i = 1; i < n && distinct; i++) distinct = strcmp(sorted[i - 1], sorted[i]) != 0;
    free(sorted);
    return distinct;
}

bool sd_job_names_are_steps(const char *const *names, size_t n, const sd_name_pattern *pattern)
{
    if (n < 2 || !distinct_names(names, n)) return false;
    int64_t step = -1;
    bool two_steps = false, oom = false;
    for (size_t i = 0; i < n; i++) {
        sd_job_name j;
        if (!sd_job_name_read(names[i], pattern, &j)) return false;
        oom |= j.oom;
        if (j.step < 0) continue;
        if (step >= 0 && j.step != step) two_steps = true;
        step = j.step;
    }
    return two_steps || oom;
}

/* --name-pattern reads every name: the user said they are a job's, one step or more. */
static bool pattern_reads_all(const char *const *names, size_t n, const sd_name_pattern *pattern)
{
    if (!pattern) return false;
    for (size_t i = 0; i < n; i++) {
        sd_job_name j;
        if (!sd_job_name_read(names[i], pattern, &j) || j.layout != SD_JOB_PATTERN) return false;
    }
    return true;
}

sd_names_view sd_names_view_of(const char *const *names, size_t n, sd_read_as as,
                               const sd_name_pattern *pattern)
{
    if (as == SD_READ_AS_RANKS) return SD_NAMES_RANKS;
    if (as == SD_READ_AS_SERIES) return SD_NAMES_SERIES;
    if (n >= 2 && (pattern_reads_all(names, n, pattern) || sd_job_names_are_steps(names, n, pattern)))
        return SD_NAMES_JOB;
    return sd_ranks_names_are_ranks(names, n) ? SD_NAMES_RANKS : SD_NAMES_SERIES;
}

static int by_step_rank(const void *pa, const void *pb)
{
    const sd_job_entry *a = pa, *b = pb;
    if (a->name.step != b->name.step) return (a->name.step > b->name.step) - (a->name.step < b->name.step);
    if (a->name.oom != b->name.oom) return a->name.oom ? 1 : -1;
    if (a->name.rank != b->name.rank) return (a->name.rank > b->name.rank) - (a->name.rank < b->name.rank);
    return strcmp(a->source, b->source);
}

static size_t rank_slot(sd_job_rank *ranks, size_t *n, int64_t rank)
{
    size_t at = 0;
    while (at < *n && ranks[at].rank < rank) at++;
    if (at < *n && ranks[at].rank == rank) return at;
    memmove(&ranks[at + 1], &ranks[at], (*n - at) * sizeof *ranks);
    ranks[at] = (sd_job_rank){.rank = rank, .first_step = -1, .last_step = -1};
    (*n)++;
    return at;
}

size_t sd_job_summarize(sd_job_entry *e, size_t n, sd_job_rank *ranks, size_t *grown)
{
    qsort(e, n, sizeof *e, by_step_rank);
    size_t nr = 0;
    for (size_t i = 0; i < n; i++) {
        sd_job_rank *r = &ranks[rank_slot(ranks, &nr, e[i].name.rank)];
        if (e[i].name.oom) {
            r->n_oom++;
            continue;
        }
        uint64_t a = e[i].total.allocated_bytes;
        if (r->n_steps++ == 0) {
            r->first_step = e[i].name.step;
            r->first_allocated = a;
        }
        r->last_step = e[i].name.step;
        r->last_allocated = a;
        r->change = r->n_steps > 1 ? (int64_t)(r->last_allocated - r->first_allocated) : 0;
    }
    *grown = SD_RANK_NONE;
    for (size_t i = 0; i < nr; i++)
        if (ranks[i].change > 0 && (*grown == SD_RANK_NONE || ranks[i].change > ranks[*grown].change))
            *grown = i;
    return nr;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* min, lower median, max of v[0..n), sorting a copy in `tmp`. */
static void spread(const uint64_t *v, uint64_t *tmp, size_t n, uint64_t *lo, uint64_t *mid,
                   uint64_t *hi)
{
    memcpy(tmp, v, n * sizeof *v);
    qsort(tmp, n, sizeof *tmp, cmp_u64);
    *lo = tmp[0];
    *mid = tmp[(n - 1) / 2];
    *hi = tmp[n - 1];
}

void sd_rank_spread_of_totals(const sd_stats *totals, size_t n, sd_rank_spread *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    out->furthest = SD_RANK_NONE;
    if (n == 0) return;
    uint64_t *buf = malloc(3 * n * sizeof *buf);
    if (!buf) return;   /* n snapshots were loaded: this is their size / 1000 at most */
    uint64_t *alloc = buf, *res = buf + n, *tmp = buf + 2 * n;
    for (size_t i = 0; i < n; i++) {
        alloc[i] = totals[i].allocated_bytes;
        res[i] = totals[i].reserved_bytes;
    }
    spread(alloc, tmp, n, &out->allocated_min, &out->allocated_median, &out->allocated_max);
    spread(res, tmp, n, &out->reserved_min, &out->reserved_median, &out->reserved_max);
    uint64_t best = 0;
    /* Ranks that all hold the same have no outlier: naming one would be a false claim. */
    for (size_t i = 0; i < n && out->allocated_min != out->allocated_max; i++) {
        uint64_t m = out->allocated_median;
        uint64_t dist = alloc[i] > m ? alloc[i] - m : m - alloc[i];
        if (out->furthest == SD_RANK_NONE || dist > best) {
            best = dist;
            out->furthest = i;
            out->furthest_delta = (int64_t)(alloc[i] - m);
        }
    }
    free(buf);
}

void sd_rank_spread_of(const sd_snapshot *const *snaps, size_t n, sd_rank_spread *out)
{
    sd_stats *totals = calloc(n ? n : 1, sizeof *totals);
    if (!totals) {
        memset(out, 0, sizeof *out);
        out->n = n;
        out->furthest = SD_RANK_NONE;
        return;
    }
    for (size_t i = 0; i < n; i++) sd_stats_total(snaps[i], &totals[i]);
    sd_rank_spread_of_totals(totals, n, out);
    free(totals);
}
