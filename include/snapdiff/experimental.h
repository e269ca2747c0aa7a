/* experimental.h - EXPERIMENTAL parts of libsnapdiff: no API or ABI promise.
 *
 * What is here may change or go in any release, a patch release too, without a new
 * SONAME; it is exported in the version node LIBSNAPDIFF_EXPERIMENTAL_0.3 (and listed in
 * the CHANGELOG when it changes), declared only where the includer defines
 * SNAPDIFF_EXPERIMENTAL (this header and pickle.h stop with #error without it; the other
 * headers declare their experimental block under it). <snapdiff/snapdiff.h> includes
 * both only with the macro. The stable answers these helpers build are in frag.h
 * (sd_frag_device's `map`, sd_frag_figures' `histogram`).
 * The other experimental header is snapdiff/pickle.h, the raw pickle reader.
 *
 * Here: the segment-map, page and bucket helpers of the fragmentation analysis (frag.h).
 * They are public because the renderers and the unit tests are clients of them, and a
 * program drawing its own segment map may want the same pages. */
#ifndef SNAPDIFF_EXPERIMENTAL
#error "snapdiff/experimental.h is in libsnapdiff's experimental tier, with no API or ABI promise (docs/architecture.md, \"Tiers\"): define SNAPDIFF_EXPERIMENTAL before including it"
#endif

#ifndef SNAPDIFF_EXPERIMENTAL_H
#define SNAPDIFF_EXPERIMENTAL_H

#include <stddef.h>
#include <stdint.h>

#include "frag.h"
#include "snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Indices of the (at most `max`) largest segments of `dev`, biggest first (ties: lower
 * address first), for the segment maps. @return how many were written to out. */
size_t sd_frag_largest_segments(const sd_cuda_device *dev, size_t max, uint32_t *out);

/* Indices of the (at most `max`, at most SD_FRAG_MAP_SEGMENTS) segments of `dev` with the
 * most stranded free bytes (free bytes empty_cache() would not release), then the
 * biggest, then the lower address: the rows of a segment map. @return how many were
 * written to out. */
size_t sd_frag_stranded_segments(const sd_cuda_device *dev, size_t max, uint32_t *out);

/* Page size of a map whose largest segment is `largest` bytes, `columns` pages at most:
 * 2 MiB times a power of two. */
uint64_t sd_frag_map_page(uint64_t largest, size_t columns);
/* Split a segment into pages of `page` bytes (the last one may be shorter) and sum its
 * blocks into them; at most max_pages. @return the number of pages written. */
size_t sd_frag_segment_pages(const sd_cuda_device *dev, const sd_segment *seg, uint64_t page,
                             sd_frag_page *pages, size_t max_pages);
sd_frag_page_fill sd_frag_page_fill_of(const sd_frag_page *p);
/* INACTIVE bytes of a segment. */
uint64_t sd_frag_segment_free(const sd_cuda_device *dev, const sd_segment *seg);
/* INACTIVE bytes of a segment that empty_cache() would not release. */
uint64_t sd_frag_segment_stranded(const sd_cuda_device *dev, const sd_segment *seg);
/* "large", "small" or "pool (a,b)": the pool a segment belongs to (SD_FRAG_POOL_NAME). */
void sd_frag_pool_name(const sd_segment *seg, char *buf, size_t size);

/* Histogram bucket of a block size, and the shared bucket bounds. */
size_t sd_frag_bucket_of(uint64_t size);
void sd_frag_bucket_bounds(size_t i, uint64_t *min_bytes, uint64_t *max_bytes);

#ifdef __cplusplus
}
#endif

#endif
