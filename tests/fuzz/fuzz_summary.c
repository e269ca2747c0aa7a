/* fuzz_summary.c - libFuzzer target for the summary reader (src/model/summary_read.c, the
 * msgpack cursor under it) and its JSON view (src/render/summary_json.c).
 *
 * Seeds are summaries of the project's fixtures (run.sh writes them with the CLI), so the
 * mutations start from well-formed ones. Each input is loaded as a snapshot would be; one
 * that loads must be a summary whose model holds together and survives the analyses (the
 * checks fuzz_load makes: fuzz_model.h), and must round-trip: encoding it, loading that
 * and encoding again gives the same bytes. The JSON view must not crash on any input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapdiff/render_summary.h"
#include "snapdiff/summarize.h"

#include "fuzz_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What only a summary promises beyond fuzz_model.h's checks: each stack's context is
 * readable and its forward stack exists. */
static void check_contexts(const sd_snapshot *s)
{
    FUZZ_CHECK(sd_snapshot_is_summary(s));
    for (uint32_t id = 0; id < sd_snapshot_stack_count(s) && id < 100000; id++) {
        const sd_stack_context *c = sd_snapshot_stack_context(s, id);
        FUZZ_CHECK(c && c->user_metadata && c->compile_context);
        FUZZ_CHECK(c->forward_stack < sd_snapshot_stack_count(s));
    }
}

static void round_trip(const sd_snapshot *s)
{
    uint8_t *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    if (sd_summary_encode(s, "fuzz", &a, &na, NULL) != SD_OK) return;   /* out of memory */
    sd_load_options lo = {.max_memory = FUZZ_BUDGET};
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
    if (sd_render_summary_json(sink, data, size, &err) != SD_OK) FUZZ_CHECK(err.text[0]);
    sd_load_options lo = {.max_memory = FUZZ_BUDGET};
    sd_error_clear(&err);
    sd_snapshot *s = sd_snapshot_load_buffer(data, size, "fuzz", &lo, &err);
    if (!s) {
        FUZZ_CHECK(err.code != SD_OK && err.text[0]);
        return 0;
    }
    if (sd_summary_sniff(data, size)) {
        check_snapshot(s);   /* the model's records, settings and the analyses */
        check_contexts(s);
        round_trip(s);
    }
    sd_snapshot_free(s);
    return 0;
}
