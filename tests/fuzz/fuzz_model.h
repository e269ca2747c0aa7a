/* fuzz_model.h - shared by the fuzz targets that build a model (fuzz_load, fuzz_summary):
 * every record of a loaded snapshot read and checked against the public header's promises
 * (indices in range, strings non-NULL, devices sorted), the recorded settings walked, and
 * the stats, the fragmentation analysis and a diff of the snapshot with itself computed, so
 * that hostile numbers which survive loading also meet the analyses. A broken invariant
 * aborts, which libFuzzer reports as a crash with its input. */
#ifndef SNAPDIFF_FUZZ_MODEL_H
#define SNAPDIFF_FUZZ_MODEL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapdiff/diff.h"
#include "snapdiff/frag.h"
#include "snapdiff/render_frag.h"
#include "snapdiff/replay.h"
#include "snapdiff/snapshot.h"
#include "snapdiff/stats.h"

#include "fuzz_check.h"

/* The memory budget of every load and analysis of a fuzz input. */
#define FUZZ_BUDGET ((uint64_t)256 << 20)

static void check_error(const sd_error *err)
{
    FUZZ_CHECK(err->code != SD_OK);
    FUZZ_CHECK(err->text[0] != '\0');
    FUZZ_CHECK(memchr(err->text, '\0', sizeof err->text) != NULL);
    FUZZ_CHECK(memchr(err->source, '\0', sizeof err->source) != NULL);
    char line[600];
    sd_error_format(err, line, sizeof line);
}

static void check_stack(const sd_snapshot *s, uint32_t id)
{
    FUZZ_CHECK(id < sd_snapshot_stack_count(s));
    size_t n = 99;
    const uint32_t *frames = sd_snapshot_stack(s, id, &n);
    if (id == 0) FUZZ_CHECK(n == 0);
    FUZZ_CHECK(n == 0 || frames != NULL);
    for (size_t i = 0; i < n; i++) {
        const sd_frame *f = sd_snapshot_frame(s, frames[i]);
        FUZZ_CHECK(f && f->filename && f->name);
        (void)strlen(f->filename);
        (void)strlen(f->name);
    }
}

static void check_device(sd_snapshot *s, const sd_cuda_device *d)
{
    FUZZ_CHECK(d->n_segments == 0 || d->segments);
    FUZZ_CHECK(d->n_blocks == 0 || d->blocks);
    FUZZ_CHECK(d->n_trace == 0 || d->trace);
    for (size_t i = 0; i < d->n_segments; i++) {
        const sd_segment *g = &d->segments[i];
        FUZZ_CHECK((uint64_t)g->first_block + g->n_blocks <= d->n_blocks);
        if (i) FUZZ_CHECK(d->segments[i - 1].address <= g->address);   /* sorted */
        check_stack(s, g->stack);
        for (uint32_t b = g->first_block; b < g->first_block + g->n_blocks; b++)
            FUZZ_CHECK(d->blocks[b].segment == i);
    }
    for (size_t i = 0; i < d->n_blocks; i++) {
        const sd_block *b = &d->blocks[i];
        FUZZ_CHECK(b->segment < d->n_segments);
        FUZZ_CHECK(b->state <= SD_BLOCK_OTHER);
        check_stack(s, b->stack);
        (void)sd_block_state_name((sd_block_state)b->state);
    }
    for (size_t i = 0; i < d->n_trace; i++) {
        const sd_trace_entry *t = &d->trace[i];
        FUZZ_CHECK(t->action < SD_ACT_COUNT);
        check_stack(s, t->stack);
        (void)sd_trace_action_name((sd_trace_action)t->action);
    }
    sd_stats st;
    sd_stats_device(d, &st);
    FUZZ_CHECK(st.blocks == d->n_blocks && st.trace_entries == d->n_trace);
    uint64_t by_action[SD_ACT_COUNT], entries = 0;
    sd_stats_device_actions(d, by_action, SD_ACT_COUNT);
    for (int a = 0; a < SD_ACT_COUNT; a++) entries += by_action[a];
    FUZZ_CHECK(entries == d->n_trace);
}

static void analyse(const sd_snapshot *s)
{
    sd_error err;
    sd_error_clear(&err);
    sd_frag *f = sd_frag_create(s, NULL, &err);
    if (f) {
        for (size_t i = 0; i < sd_frag_device_count(f); i++) {
            const sd_frag_device *d = sd_frag_device_at(f, i);
            char words[SD_FRAG_TEXT_MAX];
            FUZZ_CHECK(d && sd_frag_explain(&d->why, words, sizeof words) < sizeof words);
            for (size_t k = 0; k < d->n_advice; k++)
                FUZZ_CHECK(sd_frag_advice_text(&d->advice[k], words, sizeof words) < sizeof words);
            for (size_t k = 0; k < d->map.n_rows; k++)
                FUZZ_CHECK(d->map.rows[k].n_pages <= SD_FRAG_MAP_COLUMNS);
        }
        sd_frag_free(f);
    } else {
        check_error(&err);
    }
    /* The allocator replayed (replay.h): traces that do not add up only count warnings. */
    static const char *const confs[] = {"expandable_segments:True", "max_split_size_mb:64"};
    sd_replay_options ropts = {.alloc_confs = confs, .n_alloc_confs = 2,
                               .capacity = 1ULL << 30, .timeline_points = 16};
    sd_error_clear(&err);
    sd_replay *rp = sd_replay_create(s, &ropts, &err);
    if (rp) {
        for (size_t i = 0; i < sd_replay_device_count(rp); i++) {
            const sd_replay_device *d = sd_replay_device_at(rp, i);
            FUZZ_CHECK(d->placements_matched <= d->placements_checked);
            FUZZ_CHECK(d->segment_decisions_matched <= d->segment_decisions_checked);
            FUZZ_CHECK(d->n_configs == 3 && d->n_recorded_timeline <= 16);
            for (size_t c = 0; c < d->n_configs; c++)
                FUZZ_CHECK(d->configs[c].n_timeline <= 16 &&
                           d->configs[c].n_oom_outcomes <= d->recorded_ooms);
        }
        sd_replay_free(rp);
    } else {
        check_error(&err);
    }
    sd_diff_options dopts;
    memset(&dopts, 0, sizeof dopts);
    dopts.max_memory = FUZZ_BUDGET;
    sd_error_clear(&err);
    sd_diff *df = sd_diff_create(s, s, &dopts, &err);
    if (df)
        sd_diff_free(df);
    else
        check_error(&err);
}

/* The recorded settings tree: at most four levels of containers, every string readable. */
static void check_setting(const sd_setting *v, int depth, size_t *nodes)
{
    ++*nodes;
    FUZZ_CHECK(v->type <= SD_SETTING_DICT);
    if (v->type == SD_SETTING_STR) FUZZ_CHECK(v->str != NULL && v->str[v->str_len] == 0);
    if (v->type != SD_SETTING_LIST && v->type != SD_SETTING_DICT) {
        FUZZ_CHECK(v->n_items == 0);
        return;
    }
    FUZZ_CHECK(depth < 4 || v->n_items == 0);
    for (size_t i = 0; i < v->n_items; i++) {
        const sd_setting *m = &v->items[i];
        FUZZ_CHECK((m->key != NULL) == (v->type == SD_SETTING_DICT));
        if (m->key) FUZZ_CHECK(m->key[m->key_len] == 0);
        check_setting(m, depth + 1, nodes);
    }
}

static void check_snapshot(sd_snapshot *s)
{
    FUZZ_CHECK(sd_snapshot_source(s) != NULL);
    FUZZ_CHECK(sd_snapshot_stack_count(s) >= 1);   /* id 0, the empty stack */
    for (size_t i = 0; i < sd_snapshot_device_count(s); i++) {
        const sd_cuda_device *d = sd_snapshot_device(s, i);
        FUZZ_CHECK(d != NULL);
        if (i) FUZZ_CHECK(sd_snapshot_device(s, i - 1)->device < d->device);
        check_device(s, d);
    }
    for (uint32_t id = 0; id < sd_snapshot_stack_count(s) && id < 100000; id++)
        check_stack(s, id);
    for (size_t i = 0; i < sd_snapshot_warning_count(s); i++)
        FUZZ_CHECK(sd_snapshot_warning(s, i) != NULL);
    const sd_allocator_settings *as = sd_snapshot_allocator_settings(s);
    if (as && as->alloc_conf) (void)strlen(as->alloc_conf);
    sd_stats total;
    sd_stats_total(s, &total);
    FUZZ_CHECK(total.device == -1);
    if (as && as->recorded) {
        size_t nodes = 0;
        check_setting(as->recorded, 0, &nodes);
        FUZZ_CHECK(nodes <= SD_SETTINGS_MAX_NODES + 1);
    }
    for (size_t i = 0; as && i < as->n_roundup_power2_divisions; i++)
        (void)as->roundup_power2_divisions[i].divisions;
    analyse(s);
}

#endif
