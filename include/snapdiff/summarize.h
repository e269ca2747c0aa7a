/* summarize.h - write a snapshot's baseline summary (the format: summary.h). */
#ifndef SNAPDIFF_SUMMARIZE_H
#define SNAPDIFF_SUMMARIZE_H

#include <stdint.h>

#include "snapshot.h"
#include "summary.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Encode `s` as a summary into a malloc'd buffer (free it with free()). `writer` names
 * the program for the file (may be NULL).
 * @return SD_OK, or SD_ENOMEM (out of memory) with err filled. */
sd_status sd_summary_encode(const sd_snapshot *s, const char *writer, uint8_t **out,
                            size_t *len, sd_error *err);

#ifdef __cplusplus
}
#endif

#endif
