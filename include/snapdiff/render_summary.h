/* render_summary.h - a baseline summary (summary.h) shown whole as JSON, for people and
 * jq (`snapdiff dump base.sdsum`). See render.h for the rules every renderer keeps. */
#ifndef SNAPDIFF_RENDER_API
#error "snapdiff/render_summary.h is in libsnapdiff's render tier (docs/architecture.md, \"Tiers\"): define SNAPDIFF_RENDER_API before including it"
#endif

#ifndef SNAPDIFF_RENDER_SUMMARY_H
#define SNAPDIFF_RENDER_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

#include "common.h"
#include "summary.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Write a summary's whole content as JSON (a msgpack map becomes an object, binary data a
 * hex string), checking the envelope and version first.
 * @return SD_OK, or an error with the byte offset (corrupt input) or SD_EIO. */
sd_status sd_render_summary_json(FILE *out, const uint8_t *data, size_t len, sd_error *err);

#ifdef __cplusplus
}
#endif

#endif
