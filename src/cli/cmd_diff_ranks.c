/* cmd_diff_ranks.c - `snapdiff OLD.zip NEW.zip`: the diff rank by rank, when either input
 * holds several snapshots (an archive or a directory of ranks).
 *
 * Members are paired (pairs.c, ranks.h); each pair gets the whole diff report (text, or a
 * snapdiff.diff/1 document inside snapdiff.diff-ranks/1), a member on one side only is
 * reported, never skipped; then one line per rank with its growth and the spread of NEW.
 * --max-growth gates every rank: exit 1 when any grew too much (or is missing).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "msg.h"
#include "render/check_render.h"
#include "render/diff_render.h"
#include "render/format.h"
#include "snapdiff/gate.h"

static const char *missing_text(const sd_rank_pair *p)
{
    return p->old_index == SD_RANK_NONE ? "only in NEW: no OLD member to compare with"
                                        : "only in OLD: missing from NEW";
}

/* One pair's report; *grew: its allocated delta. EXIT_OK, or EXIT_TROUBLE (printed). */
static int one_pair(const struct cli_opts *o, const struct cli_pairs *pp, size_t i,
                    sd_snapshot **const *side, bool first, int64_t *grew, bool *gate_failed)
{
    const sd_rank_pair *p = &pp->pairs[i];
    bool json = o->format == FORMAT_JSON, missing = p->old_index == SD_RANK_NONE
                                                    || p->new_index == SD_RANK_NONE;
    const char *name = cli_pair_name(pp, i);
    if (json) {
        printf("%s\n    {\"member\": ", first ? "" : ",");
        sdp_put_json_string(stdout, name, strlen(name));
        if (p->rank >= 0) printf(", \"rank\": %lld", (long long)p->rank);
        else printf(", \"rank\": null");
        printf(", \"old_member\": ");
        if (p->old_index != SD_RANK_NONE)
            sdp_put_json_string(stdout, pp->names[0][p->old_index],
                                strlen(pp->names[0][p->old_index]));
        else printf("null");
        printf(", \"missing\": %s, \"diff\": ",
               !missing ? "null" : p->old_index == SD_RANK_NONE ? "\"old\"" : "\"new\"");
    } else {
        if (!first) printf("\n");
        printf("=== %s", pp->labels[i]);
        if (p->rank >= 0) printf(" (%s)", name);
        if (p->old_index != SD_RANK_NONE && p->new_index != SD_RANK_NONE
            && strcmp(pp->names[0][p->old_index], name) != 0)
            printf(", OLD %s", pp->names[0][p->old_index]);
        printf(" ===\n");
    }
    if (missing) {
        msg_warn("%s: %s", pp->labels[i], missing_text(p));
        if (json) printf("null}");
        else printf("%s\n", missing_text(p));
        *gate_failed = *gate_failed || o->has_max_growth;
        return EXIT_OK;
    }
    sd_diff_options dopts;
    cli_diff_options(o, &dopts);
    sd_error err;
    sd_error_clear(&err);
    sd_diff *d = sd_diff_create(side[0][p->old_index], side[1][p->new_index], &dopts, &err);
    if (!d) {
        msg_sd_error(&err);
        return EXIT_TROUBLE;
    }
    sd_status st;
    if (json) {
        st = sdp_render_diff_json(stdout, d);
        printf("    }");
    } else {
        sdp_diff_text_options to = {.render = {.color = o->color}, .top = (size_t)o->top};
        st = sdp_render_diff_text(stdout, d, &to);
    }
    *grew = sd_diff_totals_of(d)->delta.allocated;
    if (o->has_max_growth) {
        sd_limits limits = {0};
        limits.has[SD_LIMIT_MAX_GROWTH] = true;
        limits.value[SD_LIMIT_MAX_GROWTH] = o->max_growth;
        sd_gate gate;
        sd_gate_diff(d, &limits, &gate);
        if (!gate.pass) {
            msg_error("check failed: %s: allocated memory grew by %s, more than --max-growth %s",
                      pp->labels[i], sdp_fmt_delta(gate.results[0].measured).s,
                      sdp_fmt_bytes(o->max_growth).s);
            *gate_failed = true;
        }
    }
    sd_diff_free(d);
    if (st == SD_ENOMEM) msg_error("out of memory while writing the report");
    return st == SD_OK || st == SD_EIO ? EXIT_OK : EXIT_TROUBLE;
}

/* The closing table: growth per rank, then the spread of NEW. */
static void summary(const struct cli_opts *o, const struct cli_pairs *pp, const int64_t *grew,
                    sd_snapshot **const *side, const size_t *count)
{
    printf("\n%sGrowth per %s%s\n", o->color ? "\033[1m" : "", pp->n && pp->pairs[0].rank >= 0
                                                                 ? "rank" : "member",
           o->color ? "\033[0m" : "");
    printf("  %12s  %s\n", "allocated", "member");
    for (size_t i = 0; i < pp->n; i++) {
        const sd_rank_pair *p = &pp->pairs[i];
        bool missing = p->old_index == SD_RANK_NONE || p->new_index == SD_RANK_NONE;
        printf("  %12s  %s\n", missing ? "missing" : sdp_fmt_delta(grew[i]).s, pp->labels[i]);
    }
    const char **names = calloc(count[1] ? count[1] : 1, sizeof *names);
    if (!names) return;
    for (size_t i = 0; i < pp->n; i++)
        if (pp->pairs[i].new_index != SD_RANK_NONE) names[pp->pairs[i].new_index] = pp->labels[i];
    bool all = true;
    for (size_t i = 0; i < count[1]; i++) all = all && names[i];
    if (all && count[1] > 1) {
        sd_rank_spread sp;
        sd_rank_spread_of((const sd_snapshot *const *)side[1], count[1], &sp);
        printf("\n");
        sdp_render_spread_text(stdout, &sp, names,
                               pp->pairs[0].rank >= 0 ? "ranks" : "members", o->color);
    }
    free(names);
}

int cmd_diff_ranks(const struct cli_opts *o, sd_snapshot **const *side, const size_t *count)
{
    if (o->format != FORMAT_TEXT && o->format != FORMAT_JSON) {
        msg_error("--format folded and pprof take one snapshot per input; pick a member as "
                  "ARCHIVE:MEMBER");
        return EXIT_TROUBLE;
    }
    if (o->output && !freopen(o->output, "w", stdout)) {   /* main flushes and checks it */
        msg_error("%s: cannot write: %s", o->output, strerror(errno));
        return EXIT_TROUBLE;
    }
    struct cli_pairs pp;
    if (cli_pair_members(o->files, side, count, &pp) != 0) return EXIT_TROUBLE;
    int64_t *grew = calloc(pp.n ? pp.n : 1, sizeof *grew);
    if (!grew) {
        msg_error("out of memory");
        cli_pairs_free(&pp);
        return EXIT_TROUBLE;
    }
    bool json = o->format == FORMAT_JSON, gate_failed = false;
    int status = EXIT_OK;
    if (json) printf("{\n  \"schema\": \"snapdiff.diff-ranks/1\",\n  \"members\": [");
    for (size_t i = 0; i < pp.n && status == EXIT_OK; i++)
        status = one_pair(o, &pp, i, side, i == 0, &grew[i], &gate_failed);
    if (json) printf("\n  ]\n}\n");
    else if (status == EXIT_OK) summary(o, &pp, grew, side, count);
    free(grew);
    cli_pairs_free(&pp);
    return status == EXIT_OK && gate_failed ? EXIT_CHECK_FAILED : status;
}
