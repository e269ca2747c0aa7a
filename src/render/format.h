/* format.h - what every renderer shares: numbers as people read them, and text escaped
 * for the format it lands in. One copy of each, here (prefix sdp_). Not installed. */
#ifndef SNAPDIFF_RENDER_FORMAT_H
#define SNAPDIFF_RENDER_FORMAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/base.h"

/* Short strings by value, so a renderer can write fmt(a).s, fmt(b).s in one printf. */
typedef struct sdp_text { char s[48]; } sdp_text;

sdp_text sdp_fmt_bytes(uint64_t n);     /* "1.5 GiB", "512 B" (sd_format_bytes) */
sdp_text sdp_fmt_delta(int64_t n);      /* "+1.5 GiB", "-512 B", "0 B" */
sdp_text sdp_fmt_count(uint64_t n);     /* 16956 -> "16,956" */
sdp_text sdp_fmt_count_delta(int64_t n);    /* 4261 -> "+4,261", -3 -> "-3", 0 -> "0" */
sdp_text sdp_fmt_pow2(uint64_t n);      /* exact powers of two: "4 KiB", "1 GiB" */
int64_t sdp_sdelta(uint64_t new_v, uint64_t old_v);   /* new - old, signed */

sdp_text sdp_fmt_duration_us(int64_t us);   /* "850 us", "1.5 ms", "2.0 s", "12.5 min" */

/* ANSI colours of the text renderers: the escape sequence when `on`, else "". */
typedef enum sdp_colour {
    SDP_BOLD, SDP_DIM, SDP_RED, SDP_GREEN, SDP_YELLOW, SDP_RESET
} sdp_colour;
const char *sdp_ansi(bool on, sdp_colour c);

/* XML text content or attribute value; bytes that are not valid UTF-8 or not allowed in
 * XML 1.0 become '?'. */
void sdp_put_xml(FILE *out, const char *text, size_t n);
/* A JSON string literal, quotes included (for renderers that stream JSON by hand). */
void sdp_put_json_string(FILE *out, const char *text, size_t n);
/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
size_t sdp_utf8_seq_len(const unsigned char *s, size_t n);

/* A group key for a text column about `width` characters wide, never cutting a site:
 * "path:line name" keeps "file:line name" whole and shortens its path from the left
 * (".../proj/model.py:340 forward"); callers after " <- " are shortened the same way and
 * left out (" <- ...") once the width is spent. A key that fits is copied as it is.
 * @return buf. */
const char *sdp_fit_key(const char *key, size_t width, char *buf, size_t size);

#endif
