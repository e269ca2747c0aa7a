/* fuzz_curve.c - libFuzzer target for the training-log reader (src/logs/log_read.c:
 * text lines, JSON Lines, CSV, nvidia-smi CSV, gzip) and the curve analysis and views
 * (src/analysis/curve.c, src/render/curve_*.c).
 *
 * Seeds are the curve fixtures (testdata/curve/). The reader takes a path (logs are files
 * or stdin), so each input is written to one temporary file first. Any input must give a
 * curve or an error with a message, never a crash, and a curve must keep its promises:
 * samples bounded by max_samples, finite slopes within their interval, every view written.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "snapdiff/curve.h"
#include "snapdiff/render_curve.h"

#include "fuzz_check.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *input_path(void)
{
    static char path[64];
    if (!path[0]) {
        snprintf(path, sizeof path, "/tmp/fuzz_curve_%ld.log", (long)getpid());
    }
    return path;
}

static void check_curve(const sd_curve *c, const sd_curve_options *o)
{
    for (size_t i = 0; i < sd_curve_series_count(c); i++) {
        const sd_curve_series *s = sd_curve_series_at(c, i);
        FUZZ_CHECK(s && s->source);
        /* Memory bounded whatever the log's length: samples merged, never all kept. */
        FUZZ_CHECK(s->stride >= 1);
        FUZZ_CHECK(s->samples / s->stride <= 4 * (uint64_t)o->max_samples + 4);
        if (s->verdict != SD_CURVE_UNDECIDED && isfinite(s->slope) && isfinite(s->low) &&
            isfinite(s->high))
            FUZZ_CHECK(s->low <= s->slope + fabs(s->slope) * 1e-9 + 1e-9 &&
                       s->slope <= s->high + fabs(s->slope) * 1e-9 + 1e-9);
    }
    FILE *null = fopen("/dev/null", "w");
    if (!null) return;
    sd_render_options ro = SD_RENDER_OPTIONS_INIT;
    sd_error err;
    sd_error_clear(&err);
    (void)sd_render_curve_text(null, c, &ro, &err);
    (void)sd_render_curve_json(null, c, &ro, &err);
    (void)sd_render_curve_github(null, c, &ro, &err);
    fclose(null);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = input_path();
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    size_t wrote = fwrite(data, 1, size, f);
    fclose(f);
    if (wrote != size) return 0;
    /* A small sample store: the pairwise merging runs within a few hundred lines. */
    sd_curve_options o = {.max_samples = 16, .capacity = 80ull << 30};
    o.limits.has_max_per_step = true;
    o.limits.max_per_step = 65536;
    sd_error err;
    sd_error_clear(&err);
    const char *paths[1] = {path};
    sd_curve *c = sd_curve_create(paths, 1, &o, &err);
    if (!c) {
        FUZZ_CHECK(err.text[0] != '\0');
        return 0;
    }
    check_curve(c, &o);
    sd_curve_free(c);
    return 0;
}
