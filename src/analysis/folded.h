/* folded.h - a profile's stacks as folded stacks (private to libsnapdiff): each stack's
 * frames outermost first, ';'-separated, PyTorch's noise frames left out (as its own
 * _memory_viz does), an autograd node or ATen op by its readable name, a path as every
 * view labels it (attrib.h, sd_frame_label_path). Stacks that read the same after that are
 * merged (analysis/stack_merge.h). The folded output (render_diff.h) writes these lines;
 * the report's icicle (report_data.h) draws them.
 */
#ifndef SNAPDIFF_ANALYSIS_FOLDED_H
#define SNAPDIFF_ANALYSIS_FOLDED_H

#include "analysis/stack_merge.h"

/* The folded stacks of side `to` minus side `from`: lines[0..n) are the stacks whose
 * bytes grew, sorted by text, each key its frames outermost first, separated by ';' (no
 * frame text holds one). The lines are the merge table's: free them with sdp_folded_free.
 * @return SD_OK or SD_ENOMEM. */
typedef struct sdp_folded {
    sdp_arena arena;
    sdp_stack_merge merge;
    sdp_merged_stack **lines;
    size_t n;
} sdp_folded;
sd_status sdp_folded_create(sdp_folded *f, const sd_profile *p, size_t from, size_t to,
                            uint64_t max_memory, sd_error *err);
void sdp_folded_free(sdp_folded *f);

#endif
