/* frag_svg.c - `snapdiff frag --svg FILE`: the segment map and the free-block histogram
 * as one self-contained SVG (no scripts, no external fonts or styles), one panel per
 * device of every file. The <svg> element stands alone (xmlns, size, viewBox), so an HTML
 * report can embed it; the document writer only adds the XML prolog. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "render/format.h"
#include "render/frag_render.h"

#define WIDTH 1000
#define MARGIN 20
#define LABEL_W 320                       /* segment labels left of the bars */
#define BAR_X (MARGIN + LABEL_W)
#define BAR_W (WIDTH - BAR_X - MARGIN)
#define ROW_H 16
#define ROW_GAP 6
#define HIST_H 160
#define HIST_X (MARGIN + 70)                /* histogram bars; value labels left of it */
#define HIST_W (WIDTH - HIST_X - MARGIN)
#define WRAP 130                          /* characters per explanation line */
#define MAX_LINES 4
#define NAME_KEEP 36                      /* file names: first and last 36 bytes */
#define MAX_OOMS 3                        /* oom lines per panel (the latest) */

#define C_ALLOC "#3e6fb0"
#define C_PENDING "#b07aa1"
#define C_FREE "#f2b35c"
#define C_OTHER "#999999"
#define C_TEXT "#222222"
#define C_DIM "#666666"

#define B(n) sdp_fmt_bytes(n).s

/* The file's base name, its middle elided when long; the full path as a tooltip. */
static void put_file_name(FILE *out, const char *path)
{
    const char *base = strrchr(path, '/');
    base = base && base[1] ? base + 1 : path;
    size_t n = strlen(base);
    if (n <= 2 * NAME_KEEP) {
        sdp_put_xml(out, base, n);
    } else {
        size_t head = NAME_KEEP, tail = n - NAME_KEEP;
        while (head > 0 && ((unsigned char)base[head] & 0xC0) == 0x80) head--;
        while (tail < n && ((unsigned char)base[tail] & 0xC0) == 0x80) tail++;
        sdp_put_xml(out, base, head);
        fputs("\xe2\x80\xa6", out);
        sdp_put_xml(out, base + tail, n - tail);
    }
    fputs("<title>", out);
    sdp_put_xml(out, path, strlen(path));
    fputs("</title>", out);
}

static void text_el(FILE *out, int x, int y, const char *attrs, const char *text)
{
    fprintf(out, "<text x=\"%d\" y=\"%d\" %s>", x, y, attrs);
    sdp_put_xml(out, text, strlen(text));
    fputs("</text>\n", out);
}

static const char *verdict_fill(sd_frag_verdict v)
{
    return v == SD_FRAG_FRAGMENTED ? "#c0392b" : v == SD_FRAG_FULL ? "#b7770b" : "#2e8540";
}

static const char *state_fill(uint8_t state)
{
    switch (state) {
    case SD_BLOCK_ALLOCATED: return C_ALLOC;
    case SD_BLOCK_PENDING_FREE: return C_PENDING;
    case SD_BLOCK_INACTIVE: return C_FREE;
    default: return C_OTHER;
    }
}

/* Split text into lines of at most WRAP characters at spaces. @return lines written. */
static int wrap_lines(const char *text, const char *starts[MAX_LINES], size_t lens[MAX_LINES])
{
    int n = 0;
    size_t left = strlen(text);
    while (left && n < MAX_LINES) {
        size_t take = left;
        if (take > WRAP) {
            take = WRAP;
            while (take > WRAP / 2 && text[take] != ' ') take--;
        }
        starts[n] = text;
        lens[n++] = take;
        text += take;
        left -= take;
        while (left && *text == ' ') {
            text++;
            left--;
        }
    }
    return n;
}

/* ---- the panel of one device ------------------------------------------------------ */

static int header(FILE *out, int y, const sd_snapshot *s, const sd_frag_device *d)
{
    char line[512];
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"17\" font-weight=\"bold\" fill=\"%s\">"
            "device %" PRId64 ": <tspan fill=\"%s\">%s</tspan><tspan dx=\"14\" "
            "font-size=\"13\" font-weight=\"normal\" fill=\"%s\">", MARGIN, y, C_TEXT, d->device,
            verdict_fill(d->verdict), sd_frag_verdict_name(d->verdict), C_DIM);
    put_file_name(out, sd_snapshot_source(s));
    fputs("</tspan></text>\n", out);
    y += 20;
    const char *starts[MAX_LINES];
    size_t lens[MAX_LINES];
    sdp_frag_words why = sdp_frag_why_words(&d->why);
    int n = wrap_lines(why.s, starts, lens);
    for (int i = 0; i < n; i++, y += 16) {
        fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"%s\">", MARGIN, y, C_DIM);
        sdp_put_xml(out, starts[i], lens[i]);
        fputs("</text>\n", out);
    }
    const sd_frag_figures *g = &d->fig;
    snprintf(line, sizeof line, "reserved %s \xc2\xb7 allocated %s \xc2\xb7 gap %s (%.1f%%) "
             "\xc2\xb7 largest free block %s \xc2\xb7 fragmentation index %.2f",
             B(g->reserved_bytes), B(g->allocated_bytes),
             B(g->gap_bytes), g->gap_pct, B(g->largest_free_bytes), g->fragmentation_index);
    text_el(out, MARGIN, y + 4, "font-size=\"13\" fill=\"#222222\"", line);
    snprintf(line, sizeof line, "empty_cache() would return %s of %s reserved",
             B(g->empty_cache_releasable_bytes), B(g->reserved_bytes));
    text_el(out, MARGIN, y + 22, "font-size=\"13\" fill=\"#222222\"", line);
    y += 40;
    size_t first = d->n_ooms > MAX_OOMS ? d->n_ooms - MAX_OOMS : 0;
    for (size_t i = first; i < d->n_ooms; i++, y += 18) {
        const sd_frag_oom *m = &d->ooms[i];
        sdp_frag_words site = sdp_frag_oom_site_words(s, m);
        if (!site.s[0]) snprintf(site.s, sizeof site.s, "trace entry %zu", m->trace_index);
        snprintf(line, sizeof line, "oom at %.200s: request %s, device free %s; largest "
                 "free block %s of %s free (%s): %s", site.s, B(m->request_bytes),
                 B(m->device_free_bytes), B(m->largest_free_bytes), B(m->free_bytes),
                 m->replayed ? "replayed" : "snapshot", sd_oom_cause_name(m->cause));
        text_el(out, MARGIN, y - 2, "font-size=\"13\" fill=\"#c0392b\"", line);
    }
    return y;
}

static void legend(FILE *out, int y)
{
    static const struct { const char *fill, *label; } items[] = {
        {C_ALLOC, "allocated"}, {C_PENDING, "pending-free"}, {C_FREE, "free (inactive)"}};
    int x = WIDTH - MARGIN - 3 * 130 + 20;
    for (size_t i = 0; i < sizeof items / sizeof *items; i++) {
        fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", x,
                y - 10, items[i].fill);
        text_el(out, x + 16, y, "font-size=\"12\" fill=\"#222222\"", items[i].label);
        x += 130;
    }
}

/* One segment: an outline scaled to the biggest row, filled with its runs of equal state. */
static void segment_row(FILE *out, int y, const sd_frag_map_row *r, double scale)
{
    char label[128];
    const char *mono = "font-size=\"10\" font-family=\"DejaVu Sans Mono, monospace\" "
                       "fill=\"#222222\"";
    snprintf(label, sizeof label, "0x%012" PRIx64, r->address);
    text_el(out, MARGIN, y + ROW_H - 4, mono, label);
    snprintf(label, sizeof label, "%s %s%s", B(r->total_size), r->pool,
             r->expandable ? " exp" : "");
    text_el(out, MARGIN + 94, y + ROW_H - 4, "font-size=\"10\" fill=\"#222222\"", label);
    snprintf(label, sizeof label, "%s free", B(r->free_bytes));
    text_el(out, BAR_X - 8, y + ROW_H - 4, "font-size=\"10\" text-anchor=\"end\" "
            "fill=\"#666666\"", label);
    double w = (double)r->total_size * scale;
    fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"#eeeeee\"/>\n",
            BAR_X, y, w < 1 ? 1 : w, ROW_H);
    uint64_t off = 0;
    for (size_t i = 0; i < r->n_runs; i++) {
        const sd_frag_run *run = &r->runs[i];
        double x = BAR_X + (double)off * scale, rw = (double)run->bytes * scale;
        fprintf(out, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\">"
                "<title>%s: %s in %u block%s</title></rect>\n", x, y, rw < 0.5 ? 0.5 : rw,
                ROW_H, state_fill(run->state), sd_block_state_name((sd_block_state)run->state),
                B(run->bytes), run->blocks, run->blocks == 1 ? "" : "s");
        off += run->bytes;
    }
    fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"none\" "
            "stroke=\"#555555\" stroke-width=\"0.6\"/>\n", BAR_X, y, w < 1 ? 1 : w, ROW_H);
}

static int segment_map(FILE *out, int y, const sd_frag_map *m)
{
    size_t n = m->n_rows;
    char title[96];
    snprintf(title, sizeof title, "Most stranded segments (%zu of %zu), to scale", n,
             m->n_segments);
    text_el(out, MARGIN, y, "font-size=\"14\" font-weight=\"bold\" fill=\"#222222\"", title);
    legend(out, y);
    y += 10;
    if (!n) return y + 10;
    uint64_t biggest = 1;
    for (size_t i = 0; i < n; i++)
        if (m->rows[i].total_size > biggest) biggest = m->rows[i].total_size;
    double scale = (double)BAR_W / (double)biggest;
    for (size_t i = 0; i < n; i++, y += ROW_H + ROW_GAP) segment_row(out, y, &m->rows[i], scale);
    return y + 14;
}

static void short_bucket_label(size_t i, char *buf, size_t size)
{
    uint64_t lo, hi;
    sd_frag_bucket_bounds(i, &lo, &hi);
    char v[sizeof(sdp_text)];
    snprintf(v, sizeof v, "%s", sdp_fmt_pow2(i == 0 ? hi : lo).s);
    char *sp = strchr(v, ' ');
    if (sp && sp[1]) {                           /* "4 KiB" -> "4K", "512 B" -> "512" */
        if (sp[1] == 'B') *sp = '\0';
        else {
            sp[0] = sp[1];
            sp[1] = '\0';
        }
    }
    snprintf(buf, size, "%s%s", i == 0 ? "<" : !hi ? "\xe2\x89\xa5" : "", v);
}

static int histogram(FILE *out, int y, const sd_frag_figures *g)
{
    char line[128];
    snprintf(line, sizeof line, "Free blocks by size: bytes per bucket, block count on top "
             "(%" PRIu64 " blocks, %s)", g->free_blocks, B(g->external_free_bytes));
    text_el(out, MARGIN, y, "font-size=\"14\" font-weight=\"bold\" fill=\"#222222\"", line);
    y += 24;
    uint64_t top = 0;
    for (size_t i = 0; i < SD_FRAG_BUCKETS; i++)
        if (g->histogram[i].bytes > top) top = g->histogram[i].bytes;
    int base = y + HIST_H;
    double slot = (double)HIST_W / SD_FRAG_BUCKETS;
    fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#555555\"/>\n",
            HIST_X, base, HIST_X + HIST_W, base);
    text_el(out, HIST_X - 8, y + 10, "font-size=\"11\" text-anchor=\"end\" fill=\"#666666\"",
            top ? B(top) : "0 B");
    text_el(out, HIST_X - 8, base, "font-size=\"11\" text-anchor=\"end\" fill=\"#666666\"", "0");
    fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#cccccc\" "
            "stroke-dasharray=\"3,3\"/>\n", HIST_X, y + 6, HIST_X + HIST_W, y + 6);
    for (size_t i = 0; i < SD_FRAG_BUCKETS; i++) {
        const sd_frag_bucket *b = &g->histogram[i];
        double x = HIST_X + slot * (double)i;
        double h = top ? (double)(HIST_H - 6) * (double)b->bytes / (double)top : 0;
        if (b->bytes && h < 1) h = 1;
        char label[64];
        short_bucket_label(i, label, sizeof label);
        if (b->blocks) {
            fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\">"
                    "<title>", x + 3, base - h, slot - 6, h, C_FREE);
            sdp_put_xml(out, label, strlen(label));
            fprintf(out, ": %" PRIu64 " blocks, %s</title></rect>\n", b->blocks, B(b->bytes));
            snprintf(line, sizeof line, "%" PRIu64, b->blocks);
            fprintf(out, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"10\" text-anchor=\"middle\" "
                    "fill=\"#222222\">%s</text>\n", x + slot / 2, base - h - 3, line);
        }
        fprintf(out, "<text x=\"%.2f\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\" "
                "fill=\"#666666\">", x + slot / 2, base + 14);
        sdp_put_xml(out, label, strlen(label));
        fputs("</text>\n", out);
    }
    return base + 40;
}

static int panel_height(const sd_frag_device *d)
{
    const char *starts[MAX_LINES];
    size_t lens[MAX_LINES];
    size_t segs = d->map.n_rows;
    int ooms = (int)(d->n_ooms < MAX_OOMS ? d->n_ooms : MAX_OOMS);
    sdp_frag_words why = sdp_frag_why_words(&d->why);
    int head = 20 + 16 * wrap_lines(why.s, starts, lens) + 40 + 18 * ooms;
    if (!d->map.n_segments) return head + 40;
    return head + 10 +
           (int)segs * (ROW_H + ROW_GAP) + 14 + 24 + HIST_H + 40 + 20;
}

sd_status sd_render_frag_svg_element(FILE *out, const sd_frag *const *frags, size_t n)
{
    int height = 2 * MARGIN;
    for (size_t i = 0; i < n; i++) {
        if (!sd_frag_device_count(frags[i])) height += 40;
        for (size_t d = 0; d < sd_frag_device_count(frags[i]); d++)
            height += panel_height(sd_frag_device_at(frags[i], d));
    }
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
            "<title>snapdiff frag</title>\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
            WIDTH, height, WIDTH, height);
    int y = MARGIN + 16;
    for (size_t i = 0; i < n; i++) {
        const sd_snapshot *s = sd_frag_snapshot(frags[i]);
        if (!sd_frag_device_count(frags[i])) {
            char line[300];
            snprintf(line, sizeof line, "%s: no segments, nothing is reserved",
                     sd_snapshot_source(s));
            text_el(out, MARGIN, y, "font-size=\"14\" fill=\"#222222\"", line);
            y += 40;
        }
        for (size_t d = 0; d < sd_frag_device_count(frags[i]); d++) {
            const sd_frag_device *fd = sd_frag_device_at(frags[i], d);
            int top = y;
            fprintf(out, "<g id=\"device-%zu-%" PRId64 "\">\n", i, fd->device);
            y = header(out, y, s, fd);
            if (fd->map.n_segments) {
                y = segment_map(out, y + 8, &fd->map);
                y = histogram(out, y + 8, &fd->fig);
            } else {
                text_el(out, MARGIN, y + 6, "font-size=\"13\" fill=\"#666666\"",
                        "no segments on this device, only trace entries");
                y += 40;
            }
            fputs("</g>\n", out);
            fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#dddddd\"/>\n",
                    MARGIN, y - 10, WIDTH - MARGIN, y - 10);
            y = top + panel_height(fd);
        }
    }
    fputs("</svg>\n", out);
    return ferror(out) ? SD_EIO : SD_OK;
}

sd_status sd_render_frag_svg(FILE *out, const sd_frag *const *frags, size_t n)
{
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
    return sd_render_frag_svg_element(out, frags, n);
}
