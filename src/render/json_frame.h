/* json_frame.h - the JSON pieces every JSON renderer names the same way (private). */
#ifndef SNAPDIFF_RENDER_JSON_FRAME_H
#define SNAPDIFF_RENDER_JSON_FRAME_H

#include <jansson.h>
#include <stdint.h>

#include "snapdiff/snapshot.h"

/* A frame as every schema writes it: {"filename", "line", "name"}; null for NULL. */
json_t *sdp_frame_json(const sd_frame *f);

/* A JSON string of text read from input (a path, a log's words), which need not be UTF-8:
 * jansson refuses such text, so each byte that is not UTF-8 becomes U+FFFD, as it did
 * when JSON was written by hand; null for NULL. */
json_t *sdp_json_text(const char *s);
/* The same for n bytes that may hold NULs (a summary's msgpack strings). */
json_t *sdp_json_textn(const char *s, size_t n);

#endif
