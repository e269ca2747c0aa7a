/* frag.c - the figures of `snapdiff frag`: per device, pool, stream and in total.
 *
 * The definitions are the ones in docs/json-frag.md, mirrored independently by
 * tests/truth/truth_frag.py. The verdict and the advice live in frag_verdict.c, the oom events
 * and the trace replay in frag_oom.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include "analysis/frag_internal.h"
#include "base/base.h"

/* max_split_size_mb:512 only changes how blocks of at least 512 MiB are split. */
#define SPLIT_SEGMENT (512 * SDP_MIB)

/* ---- memory ----------------------------------------------------------------------- */

void *sdp_frag_calloc(sd_frag *f, size_t n, size_t size)
{
    if (n == 0) n = 1;
    if (n > SIZE_MAX / size) return NULL;
    void *p = sdp_arena_alloc(&f->mem, n * size);
    if (p) memset(p, 0, n * size);
    return p;
}

/* ---- histogram -------------------------------------------------------------------- */

size_t sd_frag_bucket_of(uint64_t size)
{
    if (size < SDP_KIB) return 0;
    if (size >= SDP_GIB) return SD_FRAG_BUCKETS - 1;
    size_t log2 = 0;
    while (size >> (log2 + 1)) log2++;
    return log2 - 9;                       /* [1 KiB, 2 KiB) -> 1 ... [512 MiB, 1 GiB) -> 20 */
}

void sd_frag_bucket_bounds(size_t i, uint64_t *min_bytes, uint64_t *max_bytes)
{
    if (i == 0) {
        *min_bytes = 0;
        *max_bytes = SDP_KIB;
    } else if (i >= SD_FRAG_BUCKETS - 1) {
        *min_bytes = SDP_GIB;
        *max_bytes = 0;
    } else {
        *min_bytes = 1ULL << (i + 9);
        *max_bytes = 1ULL << (i + 10);
    }
}

/* ---- what empty_cache() would release --------------------------------------------- */

static bool segment_all_free(const sd_cuda_device *dev, const sd_segment *seg)
{
    for (uint32_t k = 0; k < seg->n_blocks; k++)
        if (dev->blocks[seg->first_block + k].state != SD_BLOCK_INACTIVE) return false;
    return true;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Bytes of one free block of an expandable segment that lie in whole pages: what
 * unmapping it (release_blocks -> unmap_block) hands back. Pages start at the segment
 * address (each segment of the snapshot is one contiguous mapped range). */
static uint64_t expandable_pages(const sd_segment *seg, const sd_block *b)
{
    int64_t page = (int64_t)(seg->is_small ? SDP_FRAG_SMALL_PAGE : SDP_FRAG_LARGE_PAGE);
    int64_t lo = (int64_t)(b->address - seg->address);
    int64_t hi = lo + (int64_t)b->size;
    int64_t first = -floor_div(-lo, page);            /* ceil */
    int64_t last = floor_div(hi, page);
    return last > first ? (uint64_t)(last - first) * (uint64_t)page : 0;
}

/* The part of block b that empty_cache() releases. all_free: its segment has no live
 * block. Private pools (CUDA graphs, MemPool) keep their memory while the pool lives. */
static uint64_t released_part(const sd_segment *seg, const sd_block *b, bool all_free)
{
    if (b->state != SD_BLOCK_INACTIVE || !sdp_frag_default_pool(seg)) return 0;
    if (!seg->is_expandable) return all_free ? b->size : 0;
    return expandable_pages(seg, b);
}

static uint64_t segment_releasable(const sd_cuda_device *dev, const sd_segment *seg,
                                   bool all_free)
{
    if (!sdp_frag_default_pool(seg)) return 0;
    if (!seg->is_expandable) return all_free ? seg->total_size : 0;
    uint64_t sum = 0;
    for (uint32_t k = 0; k < seg->n_blocks; k++)
        sum += released_part(seg, &dev->blocks[seg->first_block + k], all_free);
    return sum;
}

/* ---- figures of a group of segments ----------------------------------------------- */

enum pool_kind { POOL_LARGE, POOL_SMALL, POOL_PRIVATE };

typedef struct seg_filter {
    bool by_pool, by_stream;
    enum pool_kind pool;
    int64_t pool_id[2];
    uint64_t stream;
} seg_filter;

static enum pool_kind pool_kind_of(const sd_segment *seg)
{
    if (!sdp_frag_default_pool(seg)) return POOL_PRIVATE;
    return seg->is_small ? POOL_SMALL : POOL_LARGE;
}

static bool filter_match(const seg_filter *flt, const sd_segment *seg)
{
    if (flt->by_stream && seg->stream != flt->stream) return false;
    if (!flt->by_pool) return true;
    enum pool_kind k = pool_kind_of(seg);
    if (k != flt->pool) return false;
    return k != POOL_PRIVATE ||
           (seg->pool_id[0] == flt->pool_id[0] && seg->pool_id[1] == flt->pool_id[1]);
}

typedef struct accum {
    sd_frag_figures *fig;
    size_t n_alloc, n_free;
} accum;

static void add_segment(sd_frag *f, accum *acc, const sd_cuda_device *dev, const sd_segment *seg)
{
    sd_frag_figures *fig = acc->fig;
    bool all_free = segment_all_free(dev, seg);
    fig->segments++;
    fig->reserved_bytes += seg->total_size;
    uint64_t releasable = segment_releasable(dev, seg, all_free);
    fig->empty_cache_releasable_bytes += releasable;
    if (seg->is_expandable && !all_free) fig->expandable_tail_bytes += releasable;
    for (uint32_t k = 0; k < seg->n_blocks; k++) {
        const sd_block *b = &dev->blocks[seg->first_block + k];
        fig->blocks++;
        if (b->state == SD_BLOCK_ALLOCATED) {
            fig->allocated_bytes += b->size;
            if (b->size > b->requested_size) fig->internal_waste_bytes += b->size - b->requested_size;
            f->alloc_sizes[acc->n_alloc++] = b->size;
        } else if (b->state == SD_BLOCK_PENDING_FREE) {
            fig->pending_free_bytes += b->size;
        } else if (b->state == SD_BLOCK_INACTIVE) {
            fig->free_blocks++;
            fig->external_free_bytes += b->size;
            if (b->size > fig->largest_free_bytes) fig->largest_free_bytes = b->size;
            if (b->size < SDP_MIB) fig->free_below_1mib_bytes += b->size;
            uint64_t stranded = b->size - released_part(seg, b, all_free);
            fig->stranded_free_bytes += stranded;
            if (stranded > fig->largest_stranded_bytes) fig->largest_stranded_bytes = stranded;
            sd_frag_bucket *bk = &fig->histogram[sd_frag_bucket_of(b->size)];
            bk->blocks++;
            bk->bytes += b->size;
            f->free_sizes[acc->n_free++] = b->size;
        }
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The figures derived from the sums: gap, index, median, histogram bounds. */
static void finish_figures(sd_frag *f, accum *acc)
{
    sd_frag_figures *fig = acc->fig;
    fig->gap_bytes = fig->reserved_bytes > fig->allocated_bytes
                         ? fig->reserved_bytes - fig->allocated_bytes : 0;
    fig->gap_pct = fig->reserved_bytes
                       ? 100.0 * (double)fig->gap_bytes / (double)fig->reserved_bytes : 0.0;
    fig->fragmentation_index =
        fig->external_free_bytes
            ? 1.0 - (double)fig->largest_free_bytes / (double)fig->external_free_bytes : 0.0;
    fig->stranded_index =
        fig->stranded_free_bytes
            ? 1.0 - (double)fig->largest_stranded_bytes / (double)fig->stranded_free_bytes
            : 0.0;
    if (acc->n_alloc) {
        qsort(f->alloc_sizes, acc->n_alloc, sizeof *f->alloc_sizes, cmp_u64);
        fig->median_allocated_bytes = f->alloc_sizes[(acc->n_alloc - 1) / 2];
    }
    for (size_t i = 0; i < acc->n_free; i++)
        if (f->free_sizes[i] < fig->median_allocated_bytes)
            fig->free_below_median_bytes += f->free_sizes[i];
    for (size_t i = 0; i < SD_FRAG_BUCKETS; i++)
        sd_frag_bucket_bounds(i, &fig->histogram[i].min_bytes, &fig->histogram[i].max_bytes);
}

/* Figures over the matching segments of devices [first, first + n). */
static void group_figures(sd_frag *f, size_t first, size_t n, const seg_filter *flt,
                          sd_frag_figures *out)
{
    memset(out, 0, sizeof *out);
    accum acc = {out, 0, 0};
    for (size_t d = first; d < first + n; d++) {
        const sd_cuda_device *dev = sd_snapshot_device(f->snap, d);
        for (size_t i = 0; i < dev->n_segments; i++)
            if (filter_match(flt, &dev->segments[i]))
                add_segment(f, &acc, dev, &dev->segments[i]);
    }
    finish_figures(f, &acc);
}

/* Free bytes in big default large-pool segments that also hold live blocks: the case
 * max_split_size_mb addresses. */
static uint64_t large_split_free(const sd_cuda_device *dev)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < dev->n_segments; i++) {
        const sd_segment *seg = &dev->segments[i];
        if (seg->is_small || !sdp_frag_default_pool(seg) || seg->total_size < SPLIT_SEGMENT)
            continue;
        uint64_t free_bytes = 0;
        bool live = false, any_free = false;
        for (uint32_t k = 0; k < seg->n_blocks; k++) {
            const sd_block *b = &dev->blocks[seg->first_block + k];
            if (b->state == SD_BLOCK_INACTIVE) {
                any_free = true;
                free_bytes += b->size;
            } else {
                live = true;
            }
        }
        if (live && any_free) sum += free_bytes;
    }
    return sum;
}

/* ---- pools and streams ------------------------------------------------------------ */

static int cmp_pool_id(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    if (x[0] != y[0]) return (x[0] > y[0]) - (x[0] < y[0]);
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* The one pool label: the pool table and the segment map both use it. */
static void pool_name(enum pool_kind k, const int64_t id[2], char *buf, size_t size)
{
    if (k == POOL_PRIVATE)
        snprintf(buf, size, "pool (%lld,%lld)", (long long)id[0], (long long)id[1]);
    else snprintf(buf, size, "%s", k == POOL_SMALL ? "small" : "large");
}

void sd_frag_pool_name(const sd_segment *seg, char *buf, size_t size)
{
    pool_name(pool_kind_of(seg), seg->pool_id, buf, size);
}

/* Pools present on devices [first, first+n): large, small, then private ids sorted. */
static sd_status make_pools(sd_frag *f, size_t first, size_t n, sd_frag_device *out)
{
    size_t n_segs = 0;
    for (size_t d = first; d < first + n; d++) n_segs += sd_snapshot_device(f->snap, d)->n_segments;
    int64_t (*ids)[2] = sdp_frag_calloc(f, n_segs, sizeof *ids);
    if (!ids) return SD_ENOMEM;
    bool has_large = false, has_small = false;
    size_t n_ids = 0;
    for (size_t d = first; d < first + n; d++) {
        const sd_cuda_device *dev = sd_snapshot_device(f->snap, d);
        for (size_t i = 0; i < dev->n_segments; i++) {
            const sd_segment *seg = &dev->segments[i];
            enum pool_kind k = pool_kind_of(seg);
            if (k == POOL_LARGE) has_large = true;
            else if (k == POOL_SMALL) has_small = true;
            else {
                ids[n_ids][0] = seg->pool_id[0];
                ids[n_ids][1] = seg->pool_id[1];
                n_ids++;
            }
        }
    }
    qsort(ids, n_ids, sizeof *ids, cmp_pool_id);
    /* Rows for the pools there are (a pool row is ~1 KiB: not one per segment). */
    size_t distinct = 0;
    for (size_t i = 0; i < n_ids; i++) distinct += i == 0 || cmp_pool_id(ids[i], ids[i - 1]) != 0;
    sd_frag_pool *pools = sdp_frag_calloc(f, distinct + 2, sizeof *pools);
    if (!pools) return SD_ENOMEM;
    size_t np = 0;
    seg_filter flt = {.by_pool = true};
    if (has_large) {
        flt.pool = POOL_LARGE;
        pool_name(POOL_LARGE, pools[np].pool_id, pools[np].name, sizeof pools[np].name);
        group_figures(f, first, n, &flt, &pools[np++].fig);
    }
    if (has_small) {
        flt.pool = POOL_SMALL;
        pool_name(POOL_SMALL, pools[np].pool_id, pools[np].name, sizeof pools[np].name);
        group_figures(f, first, n, &flt, &pools[np++].fig);
    }
    for (size_t i = 0; i < n_ids; i++) {
        if (i > 0 && cmp_pool_id(ids[i], ids[i - 1]) == 0) continue;
        flt.pool = POOL_PRIVATE;
        flt.pool_id[0] = pools[np].pool_id[0] = ids[i][0];
        flt.pool_id[1] = pools[np].pool_id[1] = ids[i][1];
        pool_name(POOL_PRIVATE, ids[i], pools[np].name, sizeof pools[np].name);
        group_figures(f, first, n, &flt, &pools[np++].fig);
    }
    out->pools = pools;
    out->n_pools = np;
    return SD_OK;
}

static sd_status make_streams(sd_frag *f, size_t d, sd_frag_device *out)
{
    const sd_cuda_device *dev = sd_snapshot_device(f->snap, d);
    uint64_t *streams = sdp_frag_calloc(f, dev->n_segments, sizeof *streams);
    if (!streams) return SD_ENOMEM;
    for (size_t i = 0; i < dev->n_segments; i++) streams[i] = dev->segments[i].stream;
    qsort(streams, dev->n_segments, sizeof *streams, cmp_u64);
    size_t distinct = 0;   /* a row per stream there is, not per segment */
    for (size_t i = 0; i < dev->n_segments; i++) distinct += i == 0 || streams[i] != streams[i - 1];
    sd_frag_stream *rows = sdp_frag_calloc(f, distinct ? distinct : 1, sizeof *rows);
    if (!rows) return SD_ENOMEM;
    size_t nr = 0;
    seg_filter flt = {.by_stream = true};
    for (size_t i = 0; i < dev->n_segments; i++) {
        if (i > 0 && streams[i] == streams[i - 1]) continue;
        flt.stream = rows[nr].stream = streams[i];
        group_figures(f, d, 1, &flt, &rows[nr++].fig);
    }
    out->streams = rows;
    out->n_streams = nr;
    return SD_OK;
}

/* ---- the segment map -------------------------------------------------------------- */

uint64_t sd_frag_map_page(uint64_t largest, size_t columns)
{
    uint64_t page = 2ULL << 20;
    while (columns && page < (UINT64_C(1) << 62) && (largest + page - 1) / page > columns)
        page *= 2;
    return page;
}

size_t sd_frag_segment_pages(const sd_cuda_device *dev, const sd_segment *seg, uint64_t page,
                             sd_frag_page *pages, size_t max_pages)
{
    size_t n = seg->total_size ? (size_t)((seg->total_size + page - 1) / page) : 1;
    if (n > max_pages) n = max_pages;
    memset(pages, 0, n * sizeof *pages);
    for (size_t p = 0; p < n; p++) {
        uint64_t lo = (uint64_t)p * page, hi = lo + page;
        if (hi > seg->total_size) hi = seg->total_size;
        pages[p].span = hi > lo ? hi - lo : 0;
    }
    for (uint32_t k = 0; k < seg->n_blocks; k++) {
        const sd_block *b = &dev->blocks[seg->first_block + k];
        if (b->address < seg->address) continue;
        uint64_t lo = b->address - seg->address, hi = lo + b->size;
        for (size_t p = (size_t)(lo / page); p < n && (uint64_t)p * page < hi; p++) {
            uint64_t plo = (uint64_t)p * page, phi = plo + pages[p].span;
            if (phi <= lo) continue;
            uint64_t part = (hi < phi ? hi : phi) - (lo > plo ? lo : plo);
            if (b->state == SD_BLOCK_ALLOCATED) pages[p].allocated += part;
            else if (b->state == SD_BLOCK_INACTIVE) pages[p].free += part;
            else pages[p].pending += part;
        }
    }
    return n;
}

sd_frag_page_fill sd_frag_page_fill_of(const sd_frag_page *p)
{
    if (!p->span) return SD_PAGE_NONE;
    if (p->allocated * 4 >= p->span * 3) return SD_PAGE_FULL;
    if (p->allocated * 4 >= p->span) return SD_PAGE_HALF;
    if (p->allocated) return SD_PAGE_LOW;
    return p->pending ? SD_PAGE_PENDING : SD_PAGE_FREE;
}

uint64_t sd_frag_segment_free(const sd_cuda_device *dev, const sd_segment *seg)
{
    uint64_t sum = 0;
    for (uint32_t k = 0; k < seg->n_blocks; k++)
        if (dev->blocks[seg->first_block + k].state == SD_BLOCK_INACTIVE)
            sum += dev->blocks[seg->first_block + k].size;
    return sum;
}

uint64_t sd_frag_segment_stranded(const sd_cuda_device *dev, const sd_segment *seg)
{
    bool all_free = segment_all_free(dev, seg);
    uint64_t sum = 0;
    for (uint32_t k = 0; k < seg->n_blocks; k++) {
        const sd_block *b = &dev->blocks[seg->first_block + k];
        if (b->state == SD_BLOCK_INACTIVE) sum += b->size - released_part(seg, b, all_free);
    }
    return sum;
}

/* Runs of equal state of a segment's blocks, in an array of f's arena. */
static sd_status segment_runs(sd_frag *f, const sd_cuda_device *dev, const sd_segment *seg,
                              sd_frag_map_row *r)
{
    sd_frag_run *runs = sdp_frag_calloc(f, seg->n_blocks, sizeof *runs);
    if (!runs) return SD_ENOMEM;
    size_t n = 0;
    for (uint32_t k = 0; k < seg->n_blocks; k++) {
        const sd_block *b = &dev->blocks[seg->first_block + k];
        if (!n || runs[n - 1].state != b->state) runs[n++].state = b->state;
        runs[n - 1].bytes += b->size;
        runs[n - 1].blocks++;
    }
    r->runs = runs;
    r->n_runs = n;
    return SD_OK;
}

/* The segments with the most stranded free memory, each split into pages of one size
 * for all. */
static sd_status make_map(sd_frag *f, const sd_cuda_device *dev, sd_frag_map *map)
{
    uint32_t idx[SD_FRAG_MAP_SEGMENTS];
    size_t n = sd_frag_stranded_segments(dev, SD_FRAG_MAP_SEGMENTS, idx);
    map->n_segments = dev->n_segments;
    if (!n) return SD_OK;
    sd_frag_map_row *rows = sdp_frag_calloc(f, n, sizeof *rows);
    sd_frag_page *pages = sdp_frag_calloc(f, n * SD_FRAG_MAP_COLUMNS, sizeof *pages);
    if (!rows || !pages) return SD_ENOMEM;
    uint64_t biggest = 0;
    for (size_t i = 0; i < n; i++)
        if (dev->segments[idx[i]].total_size > biggest) biggest = dev->segments[idx[i]].total_size;
    map->page_bytes = sd_frag_map_page(biggest, SD_FRAG_MAP_COLUMNS);
    for (size_t i = 0; i < n; i++) {
        const sd_segment *seg = &dev->segments[idx[i]];
        sd_frag_map_row *r = &rows[i];
        r->segment = idx[i];
        r->address = seg->address;
        r->total_size = seg->total_size;
        sd_frag_pool_name(seg, r->pool, sizeof r->pool);
        r->expandable = seg->is_expandable;
        r->free_bytes = sd_frag_segment_free(dev, seg);
        sd_frag_page *mine = pages + i * SD_FRAG_MAP_COLUMNS;
        r->n_pages = sd_frag_segment_pages(dev, seg, map->page_bytes, mine, SD_FRAG_MAP_COLUMNS);
        r->pages = mine;
        if (segment_runs(f, dev, seg, r)) return SD_ENOMEM;
    }
    map->rows = rows;
    map->n_rows = n;
    return SD_OK;
}

/* ---- devices and total ------------------------------------------------------------ */

static sd_status analyse_device(sd_frag *f, size_t i)
{
    const sd_cuda_device *dev = sd_snapshot_device(f->snap, i);
    sd_frag_device *d = &f->devices[i];
    seg_filter all = {0};
    d->device = dev->device;
    group_figures(f, i, 1, &all, &d->fig);
    d->large_split_free_bytes = large_split_free(dev);
    if (make_pools(f, i, 1, d) || make_streams(f, i, d)) return SD_ENOMEM;
    sd_frag_oom *ooms = NULL;
    size_t n_ooms = 0;
    if (sdp_frag_ooms(f, dev, &ooms, &n_ooms) || make_map(f, dev, &d->map)) return SD_ENOMEM;
    d->ooms = ooms;
    d->n_ooms = n_ooms;
    return sdp_frag_judge_device(f, d);
}

static sd_status analyse_total(sd_frag *f)
{
    sd_frag_device *t = &f->total;
    seg_filter all = {0};
    t->device = -1;
    group_figures(f, 0, f->n_devices, &all, &t->fig);
    for (size_t i = 0; i < f->n_devices; i++)
        t->large_split_free_bytes += f->devices[i].large_split_free_bytes;
    if (make_pools(f, 0, f->n_devices, t)) return SD_ENOMEM;
    return sdp_frag_judge_total(f);
}

static size_t snapshot_blocks(const sd_snapshot *s)
{
    size_t n = 0;
    for (size_t i = 0; i < sd_snapshot_device_count(s); i++) n += sd_snapshot_device(s, i)->n_blocks;
    return n;
}

sd_frag *sd_frag_create(const sd_snapshot *s, const sd_frag_options *opts, sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(opts, SD_FRAG_OPTIONS_VERSION, "sd_frag_options", err)) return NULL;
    sd_frag_options o = SD_FRAG_OPTIONS_INIT;
    if (opts) o = *opts;
    if (!s || !(o.gap_threshold_pct >= 0 && o.gap_threshold_pct <= 100) ||
        !(o.index_threshold >= 0 && o.index_threshold <= 1)) {
        sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET,
                 "frag: gap threshold must be 0..100 and index threshold 0..1");
        return NULL;
    }
    sd_frag *f = calloc(1, sizeof *f);
    if (!f) goto nomem;
    f->snap = s;
    f->opts = o;
    sdp_arena_init(&f->mem, o.max_memory);
    f->attrib = sd_attrib_create(&(sd_attrib_options){.group_by = SD_GROUP_SITE}, NULL);
    if (!f->attrib) goto nomem;
    f->n_devices = sd_snapshot_device_count(s);
    size_t nb = snapshot_blocks(s);
    f->devices = sdp_frag_calloc(f, f->n_devices, sizeof *f->devices);
    f->alloc_sizes = sdp_frag_calloc(f, nb, sizeof *f->alloc_sizes);
    f->free_sizes = sdp_frag_calloc(f, nb, sizeof *f->free_sizes);
    if (!f->devices || !f->alloc_sizes || !f->free_sizes) goto nomem;
    for (size_t i = 0; i < f->n_devices; i++)
        if (analyse_device(f, i)) goto nomem;
    if (analyse_total(f)) goto nomem;
    return f;
nomem:
    sd_frag_free(f);
    sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET,
             "out of memory in the fragmentation analysis (see --max-memory)");
    return NULL;
}

void sd_frag_free(sd_frag *f)
{
    if (!f) return;
    for (size_t i = 0; f->devices && i < f->n_devices; i++)
        for (size_t k = 0; k < f->devices[i].n_ooms; k++)
            sd_levers_free((sd_levers *)f->devices[i].ooms[k].model_levers);
    sdp_arena_free(&f->mem);
    sd_attrib_free(f->attrib);
    sd_peak_free(f->peak);
    sd_replay_free(f->replay);
    free(f);
}

const sd_snapshot *sd_frag_snapshot(const sd_frag *f) { return f->snap; }
const sd_attrib *sd_frag_attrib(const sd_frag *f) { return f->attrib; }
const sd_frag_options *sd_frag_thresholds(const sd_frag *f) { return &f->opts; }
size_t sd_frag_device_count(const sd_frag *f) { return f->n_devices; }
const sd_frag_device *sd_frag_total(const sd_frag *f) { return &f->total; }

const sd_frag_device *sd_frag_device_at(const sd_frag *f, size_t i)
{
    return i < f->n_devices ? &f->devices[i] : NULL;
}

/* ---- the brief, and the segment order of the maps --------------------------------- */

void sd_frag_brief_of(const sd_snapshot *s, sd_frag_brief *out)
{
    memset(out, 0, sizeof *out);
    for (size_t d = 0; d < sd_snapshot_device_count(s); d++) {
        const sd_cuda_device *dev = sd_snapshot_device(s, d);
        for (size_t i = 0; i < dev->n_segments; i++) out->reserved += dev->segments[i].total_size;
        for (size_t i = 0; i < dev->n_blocks; i++) {
            const sd_block *b = &dev->blocks[i];
            if (b->state == SD_BLOCK_ALLOCATED) out->allocated += b->size;
            if (b->state != SD_BLOCK_INACTIVE) continue;
            out->total_free += b->size;
            if (b->size > out->largest_free) out->largest_free = b->size;
        }
    }
    out->gap = out->reserved > out->allocated ? out->reserved - out->allocated : 0;
    out->index = out->total_free ? 1.0 - (double)out->largest_free / (double)out->total_free
                                 : 0.0;
}

/* Bigger first; equal sizes by address. */
static bool segment_before(const sd_cuda_device *dev, uint32_t a, uint32_t b)
{
    const sd_segment *x = &dev->segments[a], *y = &dev->segments[b];
    if (x->total_size != y->total_size) return x->total_size > y->total_size;
    return x->address < y->address;
}

size_t sd_frag_largest_segments(const sd_cuda_device *dev, size_t max, uint32_t *out)
{
    /* Insertion into a short sorted list: max is a screenful, segments can be many. */
    size_t n = 0;
    for (size_t i = 0; i < dev->n_segments && max; i++) {
        uint32_t idx = (uint32_t)i;
        if (n < max) out[n++] = idx;
        else if (segment_before(dev, idx, out[n - 1])) out[n - 1] = idx;
        else continue;
        for (size_t k = n - 1; k > 0 && segment_before(dev, out[k], out[k - 1]); k--) {
            uint32_t t = out[k];
            out[k] = out[k - 1];
            out[k - 1] = t;
        }
    }
    return n;
}

/* More stranded first; then bigger; then the lower address. */
static bool stranded_before(const sd_cuda_device *dev, uint32_t a, uint64_t sa, uint32_t b,
                            uint64_t sb)
{
    if (sa != sb) return sa > sb;
    return segment_before(dev, a, b);
}

size_t sd_frag_stranded_segments(const sd_cuda_device *dev, size_t max, uint32_t *out)
{
    uint64_t keys[SD_FRAG_MAP_SEGMENTS];
    if (max > SD_FRAG_MAP_SEGMENTS) max = SD_FRAG_MAP_SEGMENTS;
    size_t n = 0;
    for (size_t i = 0; i < dev->n_segments && max; i++) {
        uint32_t idx = (uint32_t)i;
        uint64_t key = sd_frag_segment_stranded(dev, &dev->segments[i]);
        if (n < max) {
            out[n] = idx;
            keys[n++] = key;
        } else if (stranded_before(dev, idx, key, out[n - 1], keys[n - 1])) {
            out[n - 1] = idx;
            keys[n - 1] = key;
        } else {
            continue;
        }
        for (size_t k = n - 1; k > 0 && stranded_before(dev, out[k], keys[k], out[k - 1],
                                                         keys[k - 1]); k--) {
            uint32_t t = out[k];
            uint64_t tk = keys[k];
            out[k] = out[k - 1];
            keys[k] = keys[k - 1];
            out[k - 1] = t;
            keys[k - 1] = tk;
        }
    }
    return n;
}
