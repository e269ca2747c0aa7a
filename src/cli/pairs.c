/* pairs.c - the members of OLD and NEW paired for check and diff (ranks.h): their names
 * inside each input, the pairs, and a label per pair ("rank 2", or the member's name). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "msg.h"

/* The member's name inside its input: "rank3.pickle" of "ranks.zip:rank3.pickle". */
static const char *inner_name(const char *spec, const char *source)
{
    size_t n = strlen(spec);
    if (strncmp(source, spec, n) == 0 && (source[n] == ':' || source[n] == '/'))
        return source + n + 1;
    if (n && spec[n - 1] == '/' && strncmp(source, spec, n) == 0) return source + n;
    return source;
}

int cli_pair_names(const char *const *specs, const char *const *const *sources,
                   const size_t *count, struct cli_pairs *out)
{
    memset(out, 0, sizeof *out);
    if (count[0] > 1 && count[1] == 1) {   /* several OLD members, one NEW: which one? */
        msg_error("%s: holds %zu snapshots (%s, ...); pick one as %s:MEMBER, or give NEW as "
                  "an archive or directory of ranks too", specs[0], count[0],
                  inner_name(specs[0], sources[0][0]), specs[0]);
        return -1;
    }
    for (int s = 0; s < 2; s++) {
        out->names[s] = calloc(count[s] ? count[s] : 1, sizeof *out->names[s]);
        if (!out->names[s]) goto oom;
        for (size_t i = 0; i < count[s]; i++) out->names[s][i] = inner_name(specs[s], sources[s][i]);
    }
    size_t room = count[0] + count[1];
    out->pairs = calloc(room ? room : 1, sizeof *out->pairs);
    out->labels = calloc(room ? room : 1, sizeof *out->labels);
    if (!out->pairs || !out->labels) goto oom;
    out->n = sd_ranks_pair(out->names[0], count[0], out->names[1], count[1], out->pairs);
    out->many = count[0] > 1 || count[1] > 1;
    for (size_t i = 0; i < out->n; i++) {
        const sd_rank_pair *p = &out->pairs[i];
        if (p->rank >= 0) snprintf(out->labels[i], sizeof out->labels[i], "rank %" PRId64, p->rank);
        else snprintf(out->labels[i], sizeof out->labels[i], "%s", cli_pair_name(out, i));
    }
    return 0;
oom:
    msg_error("out of memory");
    cli_pairs_free(out);
    return -1;
}

const char *cli_pair_name(const struct cli_pairs *p, size_t i)
{
    const sd_rank_pair *x = &p->pairs[i];
    return x->new_index != SD_RANK_NONE ? p->names[1][x->new_index] : p->names[0][x->old_index];
}

void cli_pairs_free(struct cli_pairs *p)
{
    free(p->names[0]);
    free(p->names[1]);
    free(p->pairs);
    free(p->labels);
    memset(p, 0, sizeof *p);
}
