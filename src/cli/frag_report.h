/* frag_report.h - the renderings of `snapdiff frag` shared by cmd_frag.c, frag_json.c and
 * frag_svg.c. */
#ifndef SNAPDIFF_CLI_FRAG_REPORT_H
#define SNAPDIFF_CLI_FRAG_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "snapdiff/frag.h"

#define FRAG_SCHEMA "snapdiff.frag/1"
#define FRAG_MAP_SEGMENTS 16      /* the segment maps show the largest 16 segments */

/* One file's object of the snapdiff.frag/1 document (docs/json-frag.md); with_schema
 * puts "schema" first, for the one-file document. */
json_t *frag_json(const sd_frag *f, bool with_schema);

/* Write every device of every analysis as one self-contained SVG picture: per device the
 * verdict, a map of the largest segments and the free-block histogram.
 * @return 0, or -1 when writing failed (errno set). */
int frag_svg_write(FILE *out, const sd_frag *const *frags, size_t n);

/* "4 KiB", "512 MiB", "1 GiB": exact power-of-two sizes for bucket labels. */
void frag_pow2_label(uint64_t bytes, char *buf, size_t size);
/* "< 1 KiB", "1-2 KiB", "512 KiB-1 MiB", ">= 1 GiB". */
void frag_bucket_label(size_t bucket, char *buf, size_t size);

/* Bytes of a segment in [lo, hi) by block state (for map pages). */
typedef struct frag_page {
    uint64_t allocated, pending, free, span;
} frag_page;
/* Split a segment into pages of `page` bytes (the last one may be shorter) and sum its
 * blocks into them. pages must hold ceil(total_size / page) entries (at least 1).
 * @return the number of pages. */
size_t frag_segment_pages(const sd_device *dev, const sd_segment *seg, uint64_t page,
                          frag_page *pages, size_t max_pages);
/* The page size of a map whose largest segment is `largest` bytes and whose widest row
 * may have `width` characters: 2 MiB times a power of two. */
uint64_t frag_map_page(uint64_t largest, size_t width);

/* "large", "small" or "pool (a,b)": which pool a segment belongs to. */
void frag_pool_label(const sd_segment *seg, char *buf, size_t size);

#endif
