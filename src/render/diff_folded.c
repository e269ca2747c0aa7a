/* diff_folded.c - collapsed stacks ("outer;...;inner BYTES") for flame graph tools.
 *
 * flamegraph.pl, inferno and speedscope read one line per stack, outermost frame first.
 * PyTorch's noise frames are left out (as its own _memory_viz does), so different
 * interned stacks can collapse to one line: lines are merged by text. With two sides the
 * value is `to` minus `from` per line, and only growth (> 0) is written. The lines are the
 * analysis's (analysis/folded.c: the stacks' text and their merge); this file writes them.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render/diff_render.h"
#include "render/format.h"
#include "analysis/folded.h"

sd_status sd_render_diff_folded(FILE *out, const sd_profile *p, size_t from, size_t to,
                            uint64_t max_memory, sd_error *err)
{
    sd_error_clear(err);
    sdp_folded f;
    sd_status st = sdp_folded_create(&f, p, from, to, max_memory, err);
    if (st != SD_OK) return st;
    for (size_t i = 0; i < f.n; i++)
        fprintf(out, "%s %" PRIu64 "\n", f.lines[i]->key, (uint64_t)f.lines[i]->bytes);
    if (ferror(out)) st = sdp_fail(err, SD_EIO, SD_NO_OFFSET, "error writing output");
    sdp_folded_free(&f);
    return st;
}
