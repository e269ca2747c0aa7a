/* units.h - byte sizes as people write them and read them. */
#ifndef SNAPDIFF_UNITS_H
#define SNAPDIFF_UNITS_H

#include <stdbool.h>
#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parse "80GiB", "512 MiB", "1.5GB", "4096", "2k": KiB/MiB/GiB/TiB binary, KB/MB/GB/TB
 * decimal, K/M/G/T binary, plain number = bytes. @return false on junk or overflow. */
bool sd_parse_size(const char *text, uint64_t *out);

/* ---- Render tier (docs/architecture.md, "Tiers"): declared only where the includer
 * defines SNAPDIFF_RENDER_API; exported in the node LIBSNAPDIFF_RENDER_0.3. Words and
 * layout for people, which change with the tool's output: no API promise past the
 * SONAME's. */
#ifdef SNAPDIFF_RENDER_API
/* "1.5 GiB", "512 B", "3.0 MiB": binary units, one decimal above bytes. */
void sd_format_bytes(uint64_t bytes, char *buf, size_t size);
/* Signed variant: "+1.5 GiB", "-512 B", "0 B". */
void sd_format_delta(int64_t bytes, char *buf, size_t size);
#endif /* SNAPDIFF_RENDER_API */

#ifdef __cplusplus
}
#endif

#endif
