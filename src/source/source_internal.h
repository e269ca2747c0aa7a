/* source_internal.h - what source.c and source_zip.c share. Not installed. */
#ifndef SNAPDIFF_SOURCE_INTERNAL_H
#define SNAPDIFF_SOURCE_INTERNAL_H

#include <zip.h>

#include "base/base.h"
#include "snapdiff/source.h"

enum { SDP_KIND_FILE, SDP_KIND_STDIN, SDP_KIND_DIR, SDP_KIND_ZIP };
enum { SDP_DEFAULT_MAX_MEMBERS = 4096 };
#define SDP_DEFAULT_MAX_BYTES (16ull << 30)
/* Real snapshots gzip about 10-20:1 (measured on the real corpus); a bomb goes to 1000:1.
 * Small outputs are always allowed so that tiny files are not judged by their ratio. */
#define SDP_MAX_RATIO 100u
#define SDP_RATIO_FREE_BYTES (64ull << 20)

typedef struct sdp_member {
    char *name;        /* display name */
    char *path;        /* file path (dir members) */
    zip_uint64_t index; /* zip members */
} sdp_member;

/* Whether b's data is a mapping of the file (the parser may then drop what it read). */
bool sdp_bytes_mapped(const sd_bytes *b);
/* Whether several threads may read members through this one handle at once: a
 * directory's members are files read by path, nothing shared; a zip's libzip handle is
 * not to be shared between threads, and standard input is read once. */
bool sdp_input_reads_in_parallel(const sd_input *in);

struct sd_input {
    int kind;
    char *spec_path;
    sdp_member *members;
    size_t n_members;
    uint64_t max_bytes;
    uint32_t max_members;
    bool skip_summaries;      /* sd_input_options: summaries are skipped like a README */
    /* zip: the whole archive (mapped), and libzip's view of it */
    sd_bytes zip_bytes;
    size_t zip_len;
    zip_t *zip;
    /* members left out as no snapshot (sniff.c): their count, the first of them as
     * "NAME (what)" strings, and those joined: "README.md (text), x.png (a PNG image)" */
    size_t n_skipped;
    char (*skip_list)[128];
    char skipped[512];
};

/* source.c */
char *sdp_src_join2(const char *a, const char *sep, const char *b);
bool sdp_src_add_member(sd_input *in, char *name, char *path, zip_uint64_t index);
bool sdp_src_ends_with(const char *s, const char *suffix);
bool sdp_src_is_zip(const uint8_t *b, size_t n);
/* Largest output allowed from `compressed` bytes: SDP_MAX_RATIO times, at least
 * SDP_RATIO_FREE_BYTES, never more than `max`. */
uint64_t sdp_src_ratio_cap(uint64_t compressed, uint64_t max);

/* sniff.c: what the bytes look like when they are surely no pickle ("text", "a PNG
 * image", "JSON"), else NULL (a pickle, or bytes best judged by the pickle reader).
 * sdp_sniff_check: the same as the one error line "NAME: offset 0: not a pickle: ...". */
const char *sdp_sniff_not_pickle(const uint8_t *b, size_t n);
sd_status sdp_sniff_check(const uint8_t *b, size_t n, const char *name, sd_error *err);
/* A member of a directory or archive whose first bytes `head` are surely no pickle is
 * recorded in in->skip_list: @return true (leave it out). */
bool sdp_sniff_skip(sd_input *in, const char *name, const uint8_t *head, size_t n);
/* Same for zip member `index`, from its first bytes. */
bool sdp_sniff_skip_zip(sd_input *in, const char *name, zip_uint64_t index);
/* Sort the skipped names and join them into in->skipped (the note is then the same
 * whatever order the directory listed its files in). */
void sdp_sniff_sort_skipped(sd_input *in);

/* source_zip.c: list the members of in->zip_bytes (one, when `want` names it), and read
 * member i into a malloc'd buffer. */
sd_status sdp_zip_open(sd_input *in, const char *display, const char *want, sd_error *err);
sd_status sdp_zip_read(sd_input *in, size_t i, uint8_t **out, size_t *out_len, sd_error *err);

#endif
