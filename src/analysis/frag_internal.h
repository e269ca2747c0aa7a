/* frag_internal.h - shared between frag.c (figures, verdict, advice) and frag_oom.c (the
 * out-of-memory events and the trace replay). Not installed. */
#ifndef SNAPDIFF_FRAG_INTERNAL_H
#define SNAPDIFF_FRAG_INTERNAL_H

#include "base/base.h"
#include "snapdiff/experimental.h"   /* the map, page and bucket helpers */
#include "snapdiff/frag.h"
#include "snapdiff/peak.h"
#include "snapdiff/replay.h"

#define SDP_KIB 1024ULL
#define SDP_MIB (1024ULL * SDP_KIB)
#define SDP_GIB (1024ULL * SDP_MIB)

/* Requests up to 1 MiB are served from the small pool (torch's kSmallSize). */
#define SDP_FRAG_SMALL_REQUEST SDP_MIB
/* Expandable segments map physical memory in pages of 2 MiB (small pool) and 20 MiB
 * (large pool); a segment of at most 2 MiB re-created by the replay counts as small. */
#define SDP_FRAG_SMALL_PAGE (2 * SDP_MIB)
#define SDP_FRAG_LARGE_PAGE (20 * SDP_MIB)

/* The analysis. Everything it keeps is bump-allocated from `mem`, whose budget is
 * sd_frag_options.max_memory, and freed with it; scratch tables of the oom replay are
 * charged to the same budget while they live. */
struct sd_frag {
    const sd_snapshot *snap;
    sd_frag_options opts;
    sdp_arena mem;
    sd_frag_device *devices;
    size_t n_devices;
    sd_frag_device total;
    sd_attrib *attrib;          /* the default site rule, for the oom events' sites */
    sd_peak *peak;              /* the one peak, for what was live at each oom (lazily) */
    sd_replay *replay;          /* the what-if replay quoted by the advice (lazily) */
    bool replay_tried;
    /* scratch for one group: allocated and free block sizes */
    uint64_t *alloc_sizes, *free_sizes;
};

/* n zeroed elements from the analysis' arena; NULL when the budget or malloc runs out. */
void *sdp_frag_calloc(sd_frag *f, size_t n, size_t size);

/* Verdict, reason and advice of a device whose figures and oom events are set, and of
 * the total once every device is judged (frag_verdict.c). SD_OK or SD_ENOMEM. */
sd_status sdp_frag_judge_device(sd_frag *f, sd_frag_device *d);
sd_status sdp_frag_judge_total(sd_frag *f);

static inline bool sdp_frag_default_pool(const sd_segment *seg)
{
    return seg->pool_id[0] == 0 && seg->pool_id[1] == 0;
}

/* f->peak, made on first use (the default site rule). @return SD_OK or SD_ENOMEM. */
sd_status sdp_frag_peak(sd_frag *f);

/* The oom events of one device, oldest first, in an array of f's arena (*out NULL when
 * there are none). @return SD_OK or SD_ENOMEM. */
sd_status sdp_frag_ooms(sd_frag *f, const sd_cuda_device *dev, sd_frag_oom **out, size_t *n);

#endif
