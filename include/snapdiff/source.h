/* source.h - turning a command-line input into snapshot bytes.
 *
 * Inputs are detected by content, not by name: a raw pickle; gzip; a torch.save zip (the
 * member ending in data.pkl); a zip archive of several snapshots (each member is one);
 * a directory (each regular file is one); "-" for standard input. "ARCHIVE.zip:member"
 * or "DIR:member" picks one member. Decompression is bounded while it runs.
 */
#ifndef SNAPDIFF_SOURCE_H
#define SNAPDIFF_SOURCE_H

#include <stdbool.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sd_input sd_input;

#define SD_INPUT_OPTIONS_VERSION 1
typedef struct sd_input_options {
    unsigned version;   /* SD_INPUT_OPTIONS_VERSION (growable: common.h) */
    uint64_t max_memory;      /* cap on any one decompressed member; 0 = default (1 GiB*16) */
    uint32_t max_members;     /* cap on members of an archive or directory; 0 = 4096 */
    bool skip_summaries;      /* leave a directory's or archive's summaries (summary.h) out
                               * and name them as skipped, for the commands that need the
                               * snapshot itself; a member picked by name is still read */
} sd_input_options;
#define SD_INPUT_OPTIONS_INIT {SD_INPUT_OPTIONS_VERSION, 0, 0, false}
sd_status sd_input_options_init(sd_input_options *opts, unsigned version);

/* Resolve `spec` (path, "-", "ARCHIVE:member") into its members. Reads nothing large yet.
 * @return the input, or NULL with err filled. */
sd_input *sd_input_open(const char *spec, const sd_input_options *opts, sd_error *err);
void sd_input_free(sd_input *in);

size_t sd_input_count(const sd_input *in);
/* Display name of member i: "file.pickle", "ranks.zip:rank1.pickle", "<stdin>". */
const char *sd_input_name(const sd_input *in, size_t i);

/* Files of a directory left out because they are surely no snapshot (a README, a log, an
 * image: by their first bytes), and their names with what they looked like:
 * "README.md (text), loss.png (a PNG image)" ("" when none; cut with "..." when long). */
size_t sd_input_skipped_count(const sd_input *in);
const char *sd_input_skipped(const sd_input *in);

/* The bytes of one member, decompressed: a read-only map of the file where possible,
 * else a heap buffer. Release with sd_bytes_release. */
typedef struct sd_bytes_owner sd_bytes_owner;   /* opaque: what holds the bytes */
typedef struct sd_bytes {
    const uint8_t *data;
    size_t len;
    sd_bytes_owner *owner;   /* released by sd_bytes_release */
} sd_bytes;

/* @return SD_OK or an error naming the member. */
sd_status sd_input_read(sd_input *in, size_t i, sd_bytes *out, sd_error *err);
void sd_bytes_release(sd_bytes *b);

#ifdef __cplusplus
}
#endif

#endif
