/* levers_internal.h - building the levers of one moment (levers.h) inside the analyses
 * that replay to it: the peak (peak.c) hands every live block to sdp_levers_add while it
 * builds its table, then sdp_levers_end computes the model levers; frag (frag_verdict.c)
 * judges them against its oom's shortfall and adds the allocator settings it replayed. */
#ifndef SNAPDIFF_LEVERS_INTERNAL_H
#define SNAPDIFF_LEVERS_INTERNAL_H

#include "snapdiff/frag.h"
#include "snapdiff/levers.h"
#include "snapdiff/peak.h"

/* sd_peak_live_at, and the levers of that moment (judged without a shortfall), which the
 * caller frees. SD_OK, SD_EUSAGE (no such entry), SD_ENOMEM. */
sd_status sdp_peak_live_levers(sd_peak *p, size_t i, size_t entry, sd_peak_table *out,
                               sd_levers **levers);

/* A moment of device index `dev` after trace entry `entry`. NULL when memory runs out.
 * `s`, `ph` and `a` must outlive the result. */
sd_levers *sdp_levers_begin(const sd_snapshot *s, const sd_phases *ph, const sd_attrib *a,
                            size_t dev, size_t entry, uint64_t max_memory);
/* One block live then, with its category. */
sd_status sdp_levers_add(sd_levers *l, const sd_block_life *life, uint64_t size,
                         sd_category c);
/* The model levers from the blocks added, ranked; no shortfall yet. */
sd_status sdp_levers_end(sd_levers *l);
/* Judge every lever against a shortfall (has_shortfall false: none) and add the allocator
 * settings replayed at an oom (whatif may be NULL), ranked again. */
sd_status sdp_levers_judge(sd_levers *l, bool has_shortfall, uint64_t shortfall,
                           const sd_frag_whatif *whatif, size_t n_whatif);

#endif
