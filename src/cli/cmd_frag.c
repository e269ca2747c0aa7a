/* cmd_frag.c - `snapdiff frag FILE...`: is it fragmentation, how bad, what would help.
 *
 * Per file and device: the verdict with the numbers that decided it first, then the
 * figures per device, pool and stream, the free-block histogram, what empty_cache()
 * would return, the oom events, the advice; --map adds a page map of the largest
 * segments, --json the snapdiff.frag/1 document, --svg FILE a picture of both.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "frag_report.h"
#include "msg.h"
#include "render/settings.h"
#include "snapdiff/units.h"

#define HIST_BAR 40          /* widest histogram bar, in characters */
#define MAP_WIDTH 64         /* widest segment-map row, in pages */

typedef struct fmtb { char s[32]; } fmtb;

static fmtb B(uint64_t n)
{
    fmtb out;
    sd_format_bytes(n, out.s, sizeof out.s);
    return out;
}

/* ---- shared with the SVG ---------------------------------------------------------- */

void frag_pow2_label(uint64_t bytes, char *buf, size_t size)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    size_t u = 0;
    while (bytes >= 1024 && bytes % 1024 == 0 && u + 1 < sizeof units / sizeof *units) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, size, "%" PRIu64 " %s", bytes, units[u]);
}

void frag_bucket_label(size_t bucket, char *buf, size_t size)
{
    uint64_t lo, hi;
    char a[24], b[24];
    sd_frag_bucket_bounds(bucket, &lo, &hi);
    if (bucket == 0) {
        frag_pow2_label(hi, b, sizeof b);
        snprintf(buf, size, "< %s", b);
        return;
    }
    frag_pow2_label(lo, a, sizeof a);
    if (!hi) {
        snprintf(buf, size, ">= %s", a);
        return;
    }
    frag_pow2_label(hi, b, sizeof b);
    const char *ua = strchr(a, ' '), *ub = strchr(b, ' ');
    if (ua && ub && strcmp(ua, ub) == 0)        /* "1-2 KiB" rather than "1 KiB-2 KiB" */
        snprintf(buf, size, "%.*s-%s", (int)(ua - a), a, b);
    else
        snprintf(buf, size, "%s-%s", a, b);
}

uint64_t frag_map_page(uint64_t largest, size_t width)
{
    uint64_t page = 2ULL << 20;
    while (width && page < (UINT64_C(1) << 62) && (largest + page - 1) / page > width) page *= 2;
    return page;
}

size_t frag_segment_pages(const sd_device *dev, const sd_segment *seg, uint64_t page,
                          frag_page *pages, size_t max_pages)
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

/* ---- text ------------------------------------------------------------------------- */

static const char *verdict_colour(const struct cli_opts *o, sd_frag_verdict v)
{
    if (v == SD_FRAG_FRAGMENTED) return clr_red(o);
    if (v == SD_FRAG_LEAK_LIKE) return clr_yellow(o);
    return clr_green(o);
}

static void table_header(void)
{
    printf("  %-18s %10s %10s %10s %6s %10s %10s %10s %10s %6s\n", "", "reserved",
           "allocated", "gap", "gap%", "int.waste", "free", "pending", "largest", "index");
}

static void table_row(const char *label, const sd_frag_figures *g)
{
    printf("  %-18s %10s %10s %10s %5.1f%% %10s %10s %10s %10s %6.2f\n", label,
           B(g->reserved_bytes).s, B(g->allocated_bytes).s, B(g->gap_bytes).s, g->gap_pct,
           B(g->internal_waste_bytes).s, B(g->external_free_bytes).s,
           B(g->pending_free_bytes).s, B(g->largest_free_bytes).s, g->fragmentation_index);
}

static void stream_label(uint64_t stream, char *buf, size_t size)
{
    if (stream == 0) snprintf(buf, size, "  stream 0");
    else snprintf(buf, size, "  stream 0x%" PRIx64, stream);
}

static void print_table(const sd_frag_device *d)
{
    char label[64];
    table_header();
    snprintf(label, sizeof label, "device %" PRId64, d->device);
    table_row(label, &d->fig);
    for (size_t i = 0; i < d->n_pools; i++) {
        snprintf(label, sizeof label, "  %s", d->pools[i].name);
        table_row(label, &d->pools[i].fig);
    }
    for (size_t i = 0; d->n_streams > 1 && i < d->n_streams; i++) {
        stream_label(d->streams[i].stream, label, sizeof label);
        table_row(label, &d->streams[i].fig);
    }
}

static void print_histogram(const sd_frag_figures *g)
{
    size_t lo = SD_FRAG_BUCKETS, hi = 0;
    uint64_t top = 0;
    for (size_t i = 0; i < SD_FRAG_BUCKETS; i++) {
        if (!g->histogram[i].blocks) continue;
        if (lo == SD_FRAG_BUCKETS) lo = i;
        hi = i;
        if (g->histogram[i].bytes > top) top = g->histogram[i].bytes;
    }
    if (lo == SD_FRAG_BUCKETS) {
        printf("  no free blocks\n");
        return;
    }
    printf("  free blocks by size (%" PRIu64 " blocks, %s):\n", g->free_blocks,
           B(g->external_free_bytes).s);
    printf("    %-15s %7s %10s\n", "size", "blocks", "bytes");
    for (size_t i = lo; i <= hi; i++) {
        const sd_frag_bucket *b = &g->histogram[i];
        char label[40], bar[HIST_BAR + 1];
        size_t w = top ? (size_t)((b->bytes * HIST_BAR + top - 1) / top) : 0;
        if (w > HIST_BAR) w = HIST_BAR;
        memset(bar, '#', w);
        bar[w] = '\0';
        frag_bucket_label(i, label, sizeof label);
        printf("    %-15s %7" PRIu64 " %10s  %s\n", label, b->blocks, B(b->bytes).s, bar);
    }
}

static void print_oom(const sd_frag_oom *m)
{
    printf("  oom at trace entry %zu: request %s, device free %s; largest free block %s of "
           "%s free in stream %s%" PRIx64 "'s %s pool (%s): %s\n", m->trace_index,
           B(m->request_bytes).s, B(m->device_free_bytes).s, B(m->largest_free_bytes).s,
           B(m->free_bytes).s, m->stream ? "0x" : "", m->stream, m->small_pool ? "small" : "large",
           m->replayed ? "replayed from the trace" : "from the snapshot",
           sd_oom_cause_name(m->cause));
    if (m->note[0]) printf("    (not replayed: %s)\n", m->note);
}

static void print_advice(const sd_frag_device *d)
{
    if (!d->n_advice) return;
    printf("  advice:\n");
    for (size_t i = 0; i < d->n_advice; i++) printf("    - %s\n", d->advice[i]);
}

static char map_char(const frag_page *p)
{
    if (!p->span) return ' ';
    if (p->allocated * 4 >= p->span * 3) return '#';
    if (p->allocated * 4 >= p->span) return '+';
    if (p->allocated) return '-';
    return p->pending ? 'p' : '.';
}

static void print_map(const sd_device *dev, const struct cli_opts *o)
{
    uint32_t idx[FRAG_MAP_SEGMENTS];
    size_t n = sd_frag_largest_segments(dev, FRAG_MAP_SEGMENTS, idx);
    if (!n) return;
    uint64_t page = frag_map_page(dev->segments[idx[0]].total_size, MAP_WIDTH);
    char pg[24];
    frag_pow2_label(page, pg, sizeof pg);
    printf("  segment map, %zu largest of %zu segments; one character = %s:\n", n,
           dev->n_segments, pg);
    printf("    %s'#' >= 75%% allocated, '+' 25-75%%, '-' under 25%%, 'p' pending-free, '.' free;"
           "\n    pool (a,b) a private pool, exp an expandable segment%s\n", clr_dim(o), clr_reset(o));
    for (size_t i = 0; i < n; i++) {
        const sd_segment *seg = &dev->segments[idx[i]];
        frag_page pages[MAP_WIDTH];
        size_t np = frag_segment_pages(dev, seg, page, pages, MAP_WIDTH);
        char row[MAP_WIDTH + 1];
        uint64_t free_bytes = 0;
        for (size_t p = 0; p < np; p++) {
            row[p] = map_char(&pages[p]);
            free_bytes += pages[p].free;
        }
        row[np] = '\0';
        char pool[48];
        frag_pool_label(seg, pool, sizeof pool);
        printf("    0x%012" PRIx64 " %10s %-12s%s |%s| %s free\n", seg->address,
               B(seg->total_size).s, pool, seg->is_expandable ? " exp" : "    ", row,
               B(free_bytes).s);
    }
}

static void print_device(const sd_frag_device *d, const sd_device *dev, const struct cli_opts *o)
{
    const sd_frag_figures *g = &d->fig;
    printf("%sdevice %" PRId64 ": %s%s%s\n", clr_bold(o), d->device, verdict_colour(o, d->verdict),
           sd_frag_verdict_name(d->verdict), clr_reset(o));
    printf("  %s\n", d->explanation);
    print_advice(d);
    printf("\n");
    print_table(d);
    printf("\n");
    print_histogram(g);
    printf("  largest free block %s; %s free in blocks < 1 MiB; %s in blocks smaller than "
           "the median live allocation (%s)\n", B(g->largest_free_bytes).s,
           B(g->free_below_1mib_bytes).s, B(g->free_below_median_bytes).s,
           B(g->median_allocated_bytes).s);
    printf("  empty_cache() would return %s of %s reserved\n",
           B(g->empty_cache_releasable_bytes).s, B(g->reserved_bytes).s);
    for (size_t i = 0; i < d->n_ooms; i++) print_oom(&d->ooms[i]);
    if (o->map) {
        printf("\n");
        print_map(dev, o);
    }
}

static void print_text(const sd_frag *f, const struct cli_opts *o)
{
    const sd_snapshot *s = sd_frag_snapshot(f);
    size_t nd = sd_frag_device_count(f);
    printf("%s%s%s\n", clr_bold(o), sd_snapshot_source(s), clr_reset(o));
    if (nd == 0) printf("  no segments: nothing is reserved\n");
    for (size_t i = 0; i < nd; i++) {
        printf("\n");
        print_device(sd_frag_device_at(f, i), sd_snapshot_device(s, i), o);
    }
    if (nd > 1) {
        const sd_frag_device *t = sd_frag_total(f);
        printf("\n%stotal over %zu devices: %s%s%s\n", clr_bold(o), nd,
               verdict_colour(o, t->verdict), sd_frag_verdict_name(t->verdict), clr_reset(o));
        printf("  %s\n", t->explanation);
        table_header();
        table_row("total", &t->fig);
        printf("  empty_cache() would return %s of %s reserved\n",
               B(t->fig.empty_cache_releasable_bytes).s, B(t->fig.reserved_bytes).s);
    }
    printf("\n");
    sdp_settings_frag_text(stdout, sd_snapshot_allocator_settings(s));
}

/* ---- the command ------------------------------------------------------------------ */

static int print_json(sd_frag **frags, size_t n)
{
    json_t *doc;
    if (n == 1) {
        doc = frag_json(frags[0], true);
    } else {
        doc = json_object();
        json_object_set_new(doc, "schema", json_string(FRAG_SCHEMA));
        json_t *files = json_array();
        for (size_t i = 0; i < n; i++) json_array_append_new(files, frag_json(frags[i], false));
        json_object_set_new(doc, "files", files);
    }
    int rc = json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', stdout);
    json_decref(doc);
    return rc == 0 ? EXIT_OK : EXIT_TROUBLE;
}

static int write_svg(const char *path, sd_frag **frags, size_t n)
{
    FILE *out = fopen(path, "w");
    if (!out) {
        msg_error("%s: cannot write: %s", path, strerror(errno));
        return EXIT_TROUBLE;
    }
    int rc = frag_svg_write(out, (const sd_frag *const *)frags, n);
    if (fclose(out) != 0) rc = -1;
    if (rc != 0) {
        msg_error("%s: cannot write: %s", path, strerror(errno));
        return EXIT_TROUBLE;
    }
    return EXIT_OK;
}

static void free_frags(sd_frag **frags, size_t n)
{
    for (size_t i = 0; frags && i < n; i++) sd_frag_free(frags[i]);
    free(frags);
}

void frag_pool_label(const sd_segment *seg, char *buf, size_t size)
{
    if (seg->pool_id[0] || seg->pool_id[1])
        snprintf(buf, size, "pool (%lld,%lld)", (long long)seg->pool_id[0],
                 (long long)seg->pool_id[1]);
    else
        snprintf(buf, size, "%s", seg->is_small ? "small" : "large");
}

int cmd_frag(const struct cli_opts *opts)
{
    sd_snapshot **snaps;
    size_t n;
    if (cli_load_all(opts->files, opts->n_files, opts, &snaps, &n) != 0) return EXIT_TROUBLE;
    sd_frag_options fo = {opts->gap_threshold, opts->index_threshold};
    sd_frag **frags = calloc(n ? n : 1, sizeof *frags);
    int status = frags ? EXIT_OK : EXIT_TROUBLE;
    if (!frags) msg_error("out of memory");
    for (size_t i = 0; frags && i < n && status == EXIT_OK; i++) {
        sd_error err;
        sd_error_clear(&err);
        frags[i] = sd_frag_create(snaps[i], &fo, &err);
        if (!frags[i]) {
            if (!err.source[0]) snprintf(err.source, sizeof err.source, "%s", sd_snapshot_source(snaps[i]));
            msg_sd_error(&err);
            status = EXIT_TROUBLE;
        }
    }
    if (status == EXIT_OK && opts->svg) status = write_svg(opts->svg, frags, n);
    if (status == EXIT_OK) {
        if (opts->format == FORMAT_JSON) {
            status = print_json(frags, n);
        } else {
            for (size_t i = 0; i < n; i++) {
                if (i) printf("\n");
                print_text(frags[i], opts);
            }
        }
    }
    free_frags(frags, n);
    cli_free_all(snaps, n);
    return status;
}
