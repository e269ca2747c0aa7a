/* diff_folded.c - collapsed stacks ("outer;...;inner BYTES") for flame graph tools.
 *
 * flamegraph.pl, inferno and speedscope read one line per stack, outermost frame first.
 * PyTorch's noise frames are left out (as its own _memory_viz does), so different
 * interned stacks can collapse to one line: lines are merged by text. With two sides the
 * value is `to` minus `from` per line, and only growth (> 0) is written. The lines are the
 * analysis's (profile.h, sd_stacks: the stacks' text and their merge); this file writes them.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render/diff_render.h"
#include "render/format.h"

sd_status sd_render_diff_folded(FILE *out, const sd_stacks *st, sd_error *err)
{
    sd_error_clear(err);
    if (!out || !st || sd_stacks_form_of(st) != SD_STACKS_FOLDED)
        return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET,
                        "folded output: needs stacks merged as SD_STACKS_FOLDED");
    for (size_t i = 0; i < sd_stacks_count(st); i++)
        fprintf(out, "%s %" PRIu64 "\n", sd_stacks_key(st, i, NULL), (uint64_t)sd_stacks_bytes(st, i));
    return ferror(out) ? sdp_fail(err, SD_EIO, SD_NO_OFFSET, "error writing output") : SD_OK;
}
