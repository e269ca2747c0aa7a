/* json_frame.h - the JSON pieces every JSON renderer names the same way (private). */
#ifndef SNAPDIFF_RENDER_JSON_FRAME_H
#define SNAPDIFF_RENDER_JSON_FRAME_H

#include <jansson.h>
#include <stdint.h>

#include "snapdiff/snapshot.h"

/* A frame as every schema writes it: {"filename", "line", "name"}; null for NULL. */
json_t *sdp_frame_json(const sd_frame *f);

#endif
