/* diff_warn_words.c - the diff's warnings (src/analysis/diff_warn.c decides them) in
 * English, for stderr and the JSON "message"; one place words them. */
#include <inttypes.h>
#include <stdio.h>

#include "render/diff_render.h"
#include "render/format.h"

static const char *side_name(int side) { return side == 0 ? "OLD" : "NEW"; }

size_t sd_diff_warning_text(const sd_diff_warning *w, char *buf, size_t size)
{
    int n = 0;
    switch (w->code) {
    case SD_WARN_NO_SHARED_SITE:
        n = snprintf(buf, size, "OLD and NEW share no allocation site (%s sites in all): they "
                     "look like two different programs or an edited script; growth and "
                     "shrinkage below compare unrelated lines",
                     sdp_fmt_count(w->of_count).s);
        break;
    case SD_WARN_FEW_SHARED_SITES:
        n = snprintf(buf, size, "OLD and NEW share few allocation sites: %s of %s sites, "
                     "holding %.1f%% of the live bytes of both; were they made by the same "
                     "program?", sdp_fmt_count(w->count).s, sdp_fmt_count(w->of_count).s,
                     w->pct);
        break;
    case SD_WARN_DEVICES_DIFFER:
        n = snprintf(buf, size, "device %" PRId64 " has memory only in %s (%s allocated): the "
                     "files come from different devices or jobs", w->device,
                     side_name(w->side), sdp_fmt_bytes(w->bytes).s);
        break;
    case SD_WARN_SETTINGS_DIFFER:
        n = snprintf(buf, size, "the allocator settings differ (%s): reserved memory and "
                     "fragmentation are not comparable", w->setting ? w->setting : "?");
        break;
    case SD_WARN_TRACE_OVERFLOWED:
        n = snprintf(buf, size, "the trace of %s overflowed its ring buffer "
                     "(trace_alloc_overflowed): its oldest events are lost; record with a "
                     "larger max_entries", side_name(w->side));
        break;
    case SD_WARN_MOSTLY_NO_STACK:
        n = snprintf(buf, size, "%s of the %s live in %s have no stack (%.1f%%): allocated "
                     "before recording began; call "
                     "torch.cuda.memory._record_memory_history() earlier",
                     sdp_fmt_bytes(w->bytes).s, sdp_fmt_bytes(w->of_bytes).s,
                     side_name(w->side), w->pct);
        break;
    case SD_WARN_SWAPPED:
        n = snprintf(buf, size, "OLD and NEW look swapped: the newest trace event of NEW is %s "
                     "older than that of OLD; give the older snapshot first",
                     sdp_fmt_duration_us(sdp_i64_sub_sat(w->old_time_us, w->new_time_us)).s);
        break;
    case SD_WARN_PEAK_ONE_SIDE:
        n = snprintf(buf, size, "only %s recorded a trace: the peaks are not compared "
                     "(record both runs with torch.cuda.memory._record_memory_history())",
                     side_name(w->side));
        break;
    case SD_WARN_COUNT: break;
    }
    return n > 0 ? (size_t)n : 0;
}
