/* check.c - a check member's offending groups, copied out of the diff that found them
 * (check.h), so that a pair of snapshots is freed as soon as it is judged. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapdiff/check.h"

static char *dup_or_null(const char *s, bool *failed)
{
    size_t n = strlen(s ? s : "");
    char *c = malloc(n + 1);
    if (!c) {
        *failed = true;
        return NULL;
    }
    memcpy(c, s ? s : "", n + 1);
    return c;
}

/* The representative stack's site frame: the line the annotations point at. */
static const sd_frame *site_frame(const sd_diff_group *g)
{
    if (!g->rep_snapshot || g->rep_site.site < 0) return NULL;
    size_t n;
    const uint32_t *ids = sd_snapshot_stack(g->rep_snapshot, g->rep_stack, &n);
    return (size_t)g->rep_site.site < n ? sd_snapshot_frame(g->rep_snapshot, ids[g->rep_site.site])
                                        : NULL;
}

/* The group as every view names it, made while its snapshot is at hand. */
static char *label_of(const sd_diff *d, const sd_diff_group *g, bool *failed)
{
    if (!g->rep_snapshot) return dup_or_null(g->key, failed);
    char buf[SD_SITE_LABEL_MAX * 8];
    sd_group_label(sd_diff_attrib(d), g->rep_snapshot, g->rep_stack, &g->rep_site, g->key,
                   false, buf, sizeof buf);
    return dup_or_null(buf, failed);
}

sd_status sd_check_member_take(sd_check_member *m, const sd_diff *d)
{
    size_t n = m->gate.n_offenders;
    m->offenders = calloc(n ? n : 1, sizeof *m->offenders);
    if (!m->offenders) return SD_ENOMEM;
    bool failed = false;
    for (size_t i = 0; i < n; i++) {
        const sd_diff_group *g = sd_diff_group_at(d, m->gate.offenders[i].group);
        sd_check_offender *o = &m->offenders[i];
        o->limit = m->gate.offenders[i].limit;
        o->key = dup_or_null(g->key, &failed);
        o->label = label_of(d, g, &failed);
        o->old_bytes = g->old_bytes;
        o->new_bytes = g->new_bytes;
        o->delta_bytes = g->delta_bytes;
        o->delta_blocks = g->delta_blocks;
        o->pattern = g->pattern;
        const sd_frame *f = site_frame(g);
        if (f) {
            o->has_site = true;
            o->site_file = dup_or_null(f->filename, &failed);
            o->site_line = f->line;
        }
    }
    return failed ? SD_ENOMEM : SD_OK;
}

void sd_check_member_release(sd_check_member *m)
{
    for (size_t i = 0; m->offenders && i < m->gate.n_offenders; i++) {
        free(m->offenders[i].key);
        free(m->offenders[i].site_file);
        free(m->offenders[i].label);
    }
    free(m->offenders);
    m->offenders = NULL;
    sd_gate_release(&m->gate);
}

const char *sd_check_member_label(const sd_check_member *m, char *buf, size_t size)
{
    if (m->rank >= 0) snprintf(buf, size, "rank %" PRId64, m->rank);
    else snprintf(buf, size, "%s", m->name);
    return buf;
}
