/* check_words.c - the words every `snapdiff check` renderer shares (text, JSON, GitHub,
 * JUnit): a limit's measure, its limit and the sentence that says both (check_words.h). */
#include <inttypes.h>
#include <stdio.h>

#include "render/check_words.h"

static bool signed_measure(sd_limit_id id)
{
    return id == SD_LIMIT_MAX_GROWTH || id == SD_LIMIT_MAX_GROUP_GROWTH
           || id == SD_LIMIT_MAX_PER_STEP;
}

sdp_text sdp_check_measured_text(const sd_limit_result *r)
{
    sdp_text t;
    if (!r->measurable) {
        snprintf(t.s, sizeof t.s, "n/a");
        return t;
    }
    switch (r->unit) {
    case SD_UNIT_PERCENT: snprintf(t.s, sizeof t.s, "%+.2f%%", r->measured_ratio); return t;
    case SD_UNIT_RATIO: snprintf(t.s, sizeof t.s, "%.3f", r->measured_ratio); return t;
    case SD_UNIT_COUNT: snprintf(t.s, sizeof t.s, "%" PRId64, r->measured); return t;
    case SD_UNIT_BYTES: break;
    }
    return signed_measure(r->id) ? sdp_fmt_delta(r->measured)
                                 : sdp_fmt_bytes(r->measured < 0 ? 0 : (uint64_t)r->measured);
}

sdp_text sdp_check_limit_text(const sd_limit_result *r)
{
    sdp_text t;
    switch (r->unit) {
    case SD_UNIT_PERCENT: snprintf(t.s, sizeof t.s, "%g%%", r->limit_ratio); return t;
    case SD_UNIT_RATIO: snprintf(t.s, sizeof t.s, "%g", r->limit_ratio); return t;
    case SD_UNIT_COUNT: snprintf(t.s, sizeof t.s, "%" PRIu64, r->limit); return t;
    case SD_UNIT_BYTES: break;
    }
    return sdp_fmt_bytes(r->limit);
}

/* Each limit's sentence: BEFORE measure AFTER ", within/over the limit of " limit. */
static const struct { const char *before, *after; } limit_words[SD_LIMIT_COUNT] = {
    [SD_LIMIT_MAX_GROWTH] = {"allocated memory grew by ", ""},
    [SD_LIMIT_MAX_GROWTH_PCT] = {"allocated memory grew by ", " of OLD's"},
    [SD_LIMIT_MAX_GROUP_GROWTH] = {"the largest group grew by ", ""},
    [SD_LIMIT_MAX_PER_STEP] = {"allocated memory grew by ", " per step"},
    [SD_LIMIT_MAX_RESERVED] = {"NEW reserves ", ""},
    [SD_LIMIT_MAX_FRAG_INDEX] = {"NEW's fragmentation index is ", ""},
    [SD_LIMIT_FAIL_ON_NEW_SITE] = {"the largest site absent from OLD holds ", ""},
    [SD_LIMIT_MAX_OOMS] = {"NEW recorded ", " out-of-memory errors"},
};

void sdp_check_words(const sd_limit_result *r, char *buf, size_t size)
{
    sdp_text m = sdp_check_measured_text(r), l = sdp_check_limit_text(r);
    const char *rel = r->pass ? "within" : "over";
    if (r->id == SD_LIMIT_MAX_GROWTH_PCT && !r->measurable) {
        snprintf(buf, size, "OLD allocates nothing: growth of %s (no percentage), %s the "
                 "limit of %s", sdp_fmt_delta(r->measured).s, rel, l.s);
        return;
    }
    if ((unsigned)r->id >= SD_LIMIT_COUNT || !limit_words[r->id].before) {
        snprintf(buf, size, "%s: %s (limit %s)", r->name, m.s, l.s);
        return;
    }
    const char *after = limit_words[r->id].after;
    if (r->id == SD_LIMIT_MAX_OOMS && r->measured == 1) after = " out-of-memory error";
    snprintf(buf, size, "%s%s%s, %s the limit of %s", limit_words[r->id].before, m.s, after,
             rel, l.s);
}

const char *sdp_check_missing_text(sd_member_missing m) { return sd_member_missing_text(m); }
