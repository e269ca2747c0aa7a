/* fuzz_load.c - libFuzzer target for the whole load path, from bytes to the model.
 *
 * The input goes into a memfd and is opened by path with sd_input_open, so source
 * detection (raw pickle, gzip, zip of ranks, torch.save zip) and the bounded
 * decompression run exactly as for a file on disk. Each member (up to a few) is loaded
 * with sd_snapshot_load_input; every record of the model is then read and checked against
 * the header's promises (indices in range, strings non-NULL), the recorded settings are
 * walked, and the stats, the fragmentation analysis and a diff of the snapshot with itself are
 * computed, so hostile numbers that survive loading also meet the analyses.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "snapdiff/snapshot.h"
#include "snapdiff/source.h"

#include "fuzz_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_MEMBERS = 4 };

static int memfd = -1;
static char memfd_path[64];

static void put_input(const uint8_t *data, size_t size)
{
    if (memfd < 0) {
        memfd = memfd_create("fuzz_load", MFD_CLOEXEC);
        FUZZ_CHECK(memfd >= 0);
        snprintf(memfd_path, sizeof memfd_path, "/proc/self/fd/%d", memfd);
    }
    FUZZ_CHECK(ftruncate(memfd, 0) == 0);
    size_t done = 0;
    while (done < size) {
        ssize_t w = pwrite(memfd, data + done, size - done, (off_t)done);
        FUZZ_CHECK(w > 0);
        done += (size_t)w;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    put_input(data, size);
    sd_input_options iopts = {.max_memory = FUZZ_BUDGET, .max_members = 64};
    sd_load_options lopts = {.max_memory = FUZZ_BUDGET};
    sd_error err;
    sd_error_clear(&err);
    sd_input *in = sd_input_open(memfd_path, &iopts, &err);
    if (!in) {
        check_error(&err);
        return 0;
    }
    size_t n = sd_input_count(in);
    for (size_t i = 0; i < n && i < MAX_MEMBERS; i++) {
        FUZZ_CHECK(sd_input_name(in, i) != NULL);
        sd_error_clear(&err);
        sd_snapshot *s = sd_snapshot_load_input(in, i, &lopts, &err);
        if (!s) {
            check_error(&err);
            continue;
        }
        check_snapshot(s);
        sd_snapshot_free(s);
    }
    sd_input_free(in);
    return 0;
}
