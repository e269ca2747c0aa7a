/* fuzz_pickle.c - libFuzzer target for the embedded pickle reader.
 *
 * Parses the input with sd_pickle_parse under a memory budget, walks the whole tree
 * through the public accessors (fuzz_walk.h) and writes it out as JSON (the `dump`
 * path) to /dev/null. Any crash, sanitizer report, leak or broken invariant is a finding.
 */
#include <stdint.h>
#include <stdio.h>

#include "fuzz_walk.h"
#include "snapdiff/pickle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!devnull) devnull = fopen("/dev/null", "w");
    FUZZ_CHECK(devnull != NULL);

    sd_pickle_options opts = {.max_memory = 256u << 20};
    sd_error err;
    sd_error_clear(&err);
    sd_pickle *p = sd_pickle_parse(data, size, &opts, &err);
    if (!p) {
        /* A failure must say why, and point inside the input. */
        FUZZ_CHECK(err.code != SD_OK);
        FUZZ_CHECK(err.text[0] != '\0');
        FUZZ_CHECK(err.offset == SD_NO_OFFSET || err.offset <= size);
        char line[600];
        sd_error_format(&err, line, sizeof line);
        return 0;
    }
    FUZZ_CHECK(err.code == SD_OK);
    FUZZ_CHECK(sd_pickle_trailing(p) < size);
    int proto = sd_pickle_protocol(p);
    FUZZ_CHECK(proto >= 0 && proto <= 5);
    const sd_value *root = sd_pickle_root(p);
    FUZZ_CHECK(root != NULL);

    fuzz_walk_stats st = {0};
    fuzz_walk(root, size, &st);
    /* Every container slot was pushed once, so a walk never sees more than that. */
    FUZZ_CHECK(st.items <= sd_pickle_value_count(p) + 1);

    sd_error_clear(&err);
    if (sd_value_write_json(root, devnull, 1u << 16, &err) != SD_OK)
        FUZZ_CHECK(err.code != SD_OK && err.text[0] != '\0');
    sd_pickle_free(p);
    return 0;
}
