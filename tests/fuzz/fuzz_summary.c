/* fuzz_summary.c - libFuzzer target for the summary reader (src/model/summary_read.c, the
 * msgpack cursor under it) and its JSON view (src/render/summary_json.c).
 *
 * Seeds are summaries of the project's fixtures (run.sh writes them with the CLI), so the
 * mutations start from well-formed ones. Each input is loaded as a snapshot would be; one
 * that loads must be a summary whose model holds together (the same checks as fuzz_load),
 * must survive the analyses, and must round-trip: encoding it, loading that and encoding
 * again gives the same bytes. The JSON view must not crash on any input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapdiff/diff.h"
#include "snapdiff/frag.h"
#include "snapdiff/snapshot.h"
#include "snapdiff/stats.h"
#include "snapdiff/summary.h"

#define FUZZ_CHECK(cond)                                                               \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #cond, __FILE__,    \
                    __LINE__);                                                          \
            abort();                                                                    \
        }                                                                               \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint64_t BUDGET = 256u << 20;

static void check_stack(const sd_snapshot *s, uint32_t id)
{
    FUZZ_CHECK(id < sd_snapshot_stack_count(s));
    size_t n = 0;
    const uint32_t *frames = sd_snapshot_stack(s, id, &n);
    if (id == 0) FUZZ_CHECK(n == 0);
    for (size_t i = 0; i < n; i++) {
        const sd_frame *f = sd_snapshot_frame(s, frames[i]);
        FUZZ_CHECK(f && f->filename && f->name);
    }
    const sd_stack_context *c = sd_snapshot_stack_context(s, id);
    FUZZ_CHECK(c && c->user_metadata && c->compile_context);
    FUZZ_CHECK(c->forward_stack < sd_snapshot_stack_count(s));
}

static void check_model(const sd_snapshot *s)
{
    FUZZ_CHECK(sd_snapshot_is_summary(s));
    for (size_t d = 0; d < sd_snapshot_device_count(s); d++) {
        const sd_device *dev = sd_snapshot_device(s, d);
        if (d) FUZZ_CHECK(sd_snapshot_device(s, d - 1)->device < dev->device);
        for (size_t i = 0; i < dev->n_segments; i++) {
            const sd_segment *g = &dev->segments[i];
            FUZZ_CHECK((uint64_t)g->first_block + g->n_blocks <= dev->n_blocks);
            check_stack(s, g->stack);
        }
        for (size_t i = 0; i < dev->n_blocks; i++) {
            FUZZ_CHECK(dev->blocks[i].segment < dev->n_segments);
            FUZZ_CHECK(dev->blocks[i].state <= SD_BLOCK_OTHER);
            check_stack(s, dev->blocks[i].stack);
        }
        for (size_t i = 0; i < dev->n_trace; i++) {
            FUZZ_CHECK(dev->trace[i].action < SD_ACT_COUNT);
            check_stack(s, dev->trace[i].stack);
        }
    }
}

static void analyse(const sd_snapshot *s)
{
    sd_error err;
    sd_error_clear(&err);
    sd_frag *f = sd_frag_create(s, NULL, &err);
    sd_frag_free(f);
    sd_diff_options o;
    memset(&o, 0, sizeof o);
    o.max_memory = BUDGET;
    sd_diff *df = sd_diff_create(s, s, &o, NULL);   /* a NULL error pointer is accepted */
    sd_diff_free(df);
}

static void round_trip(const sd_snapshot *s)
{
    uint8_t *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    if (sd_summary_encode(s, "fuzz", &a, &na, NULL) != SD_OK) return;   /* out of memory */
    sd_load_options lo = {.max_memory = BUDGET};
    sd_error err;
    sd_error_clear(&err);
    sd_snapshot *again = sd_snapshot_load_buffer(a, na, "again", &lo, &err);
    if (!again) fprintf(stderr, "re-read failed: %s\n", err.text);
    FUZZ_CHECK(again != NULL);
    FUZZ_CHECK(sd_summary_encode(again, "fuzz", &b, &nb, NULL) == SD_OK);
    FUZZ_CHECK(na == nb && memcmp(a, b, na) == 0);
    sd_snapshot_free(again);
    free(a);
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink) sink = fopen("/dev/null", "w");
    FUZZ_CHECK(sink != NULL);
    sd_error err;
    sd_error_clear(&err);
    if (sd_summary_write_json(data, size, sink, &err) != SD_OK) FUZZ_CHECK(err.text[0]);
    sd_load_options lo = {.max_memory = BUDGET};
    sd_error_clear(&err);
    sd_snapshot *s = sd_snapshot_load_buffer(data, size, "fuzz", &lo, &err);
    if (!s) {
        FUZZ_CHECK(err.code != SD_OK && err.text[0]);
        return 0;
    }
    if (sd_summary_sniff(data, size)) {
        check_model(s);
        analyse(s);
        round_trip(s);
    }
    sd_snapshot_free(s);
    return 0;
}
