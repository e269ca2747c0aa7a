/* ranks.c - pairing the members of two rank archives, and the spread across ranks
 * (ranks.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/base.h"
#include "snapdiff/ranks.h"
#include "snapdiff/stats.h"

int64_t sd_rank_of_name(const char *name)
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

/* Every name carries a rank, and no two the same. */
static bool distinct_ranks(const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int64_t r = sd_rank_of_name(names[i]);
        if (r < 0) return false;
        for (size_t k = 0; k < i; k++)
            if (sd_rank_of_name(names[k]) == r) return false;
    }
    return true;
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

bool sd_ranks_names_are_ranks(const char *const *names, size_t n)
{
    if (n < 2 || !distinct_ranks(names, n)) return false;
    char first[1024], other[1024];
    without_rank(names[0], first, sizeof first);
    for (size_t i = 1; i < n; i++) {
        without_rank(names[i], other, sizeof other);
        if (strcmp(first, other) != 0) return false;
    }
    return true;
}

static bool same(const char *a, const char *b, bool by_rank)
{
    return by_rank ? sd_rank_of_name(a) == sd_rank_of_name(b) : strcmp(a, b) == 0;
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
    bool by_rank = distinct_ranks(old_names, n_old) && distinct_ranks(new_names, n_new);
    if (n_old == 1 && n_new == 1) {  /* two files: whatever their names */
        pairs[0] = (sd_rank_pair){0, 0, by_rank ? sd_rank_of_name(new_names[0]) : -1};
        return 1;
    }
    for (size_t i = 0; i < n_new; i++) {
        sd_rank_pair p = {SD_RANK_NONE, i, by_rank ? sd_rank_of_name(new_names[i]) : -1};
        for (size_t k = 0; k < n_old && p.old_index == SD_RANK_NONE; k++)
            if (same(old_names[k], new_names[i], by_rank)) p.old_index = k;
        pairs[n++] = p;
    }
    for (size_t k = 0; k < n_old; k++) {
        bool paired = false;
        for (size_t i = 0; i < n_new && !paired; i++)
            paired = same(old_names[k], new_names[i], by_rank);
        if (!paired)
            pairs[n++] = (sd_rank_pair){k, SD_RANK_NONE, by_rank ? sd_rank_of_name(old_names[k]) : -1};
    }
    return n;
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
