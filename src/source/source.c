/* source.c - from a command-line spec to the bytes of each snapshot it names.
 *
 * Detection is by content: gzip magic, zip magic, else a raw pickle. A zip holding a
 * member ending in data.pkl is a torch.save file (one snapshot); any other zip is an
 * archive whose members are snapshots. Every decompression is bounded while it runs:
 * an absolute cap (the memory budget) and a ratio cap against the compressed size.
 */
#define _DEFAULT_SOURCE 1 /* madvise */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/base.h"
#include "snapdiff/source.h"
#include "source/source_internal.h"

/* ---------- small helpers ---------- */

bool sdp_src_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}



static char *dup_str(const char *s)
{
    size_t n = strlen(s);
    char *p = malloc(n + 1);
    if (p) memcpy(p, s, n + 1);
    return p;
}

char *sdp_src_join2(const char *a, const char *sep, const char *b)
{
    size_t na = strlen(a), ns = strlen(sep), nb = strlen(b);
    char *p = malloc(na + ns + nb + 1);
    if (!p) return NULL;
    memcpy(p, a, na);
    memcpy(p + na, sep, ns);
    memcpy(p + na + ns, b, nb + 1);
    return p;
}

bool sdp_src_add_member(sd_input *in, char *name, char *path, zip_uint64_t index)
{
    sdp_member *m = realloc(in->members, (in->n_members + 1) * sizeof *m);
    if (!m || !name) {
        free(name);
        free(path);
        if (m) in->members = m;
        return false;
    }
    in->members = m;
    m[in->n_members++] = (sdp_member){.name = name, .path = path, .index = index};
    return true;
}

static sd_status fail_io(sd_error *err, const char *source, const char *what)
{
    sdp_error_set_source(err, source);
    return sdp_fail(err, SD_EIO, SD_NO_OFFSET, "%s: %s", what, strerror(errno));
}

/* Read everything from fd, never more than max bytes. */
static sd_status read_fd(int fd, uint64_t size_hint, uint64_t max, const char *source,
                         uint8_t **out, size_t *out_len, sd_error *err)
{
    size_t cap = size_hint ? (size_t)size_hint + 1 : 1 << 16, len = 0;
    if (size_hint > max) {
        sdp_error_set_source(err, source);
        return sdp_fail(err, SD_ELIMIT, SD_NO_OFFSET,
                        "file is %llu bytes, more than the memory budget of %llu (--max-memory)",
                        (unsigned long long)size_hint, (unsigned long long)max);
    }
    uint8_t *buf = malloc(cap);
    if (!buf) return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory reading %s", source);
    for (;;) {
        if (len == cap) {
            if (cap > max) {
                free(buf);
                sdp_error_set_source(err, source);
                return sdp_fail(err, SD_ELIMIT, SD_NO_OFFSET,
                                "input exceeds the memory budget of %llu bytes (--max-memory)",
                                (unsigned long long)max);
            }
            size_t ncap = cap * 2 > max + 1 ? (size_t)max + 1 : cap * 2; /* never past the budget */
            uint8_t *nb = realloc(buf, ncap);
            if (!nb) {
                free(buf);
                return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory reading %s", source);
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0) {
            if (errno == EINTR) continue;
            free(buf);
            return fail_io(err, source, "cannot read");
        }
        if (r == 0) break;
        len += (size_t)r;
    }
    *out = buf;
    *out_len = len;
    return SD_OK;
}

/* What holds an sd_bytes' data: a heap buffer or a mapping of the file. */
struct sd_bytes_owner {
    void *heap;
    void *map;
    size_t map_len;
};

static bool own(sd_bytes *b, void *heap, void *map, size_t map_len)
{
    b->owner = malloc(sizeof *b->owner);
    if (!b->owner) return false;
    b->owner->heap = heap;
    b->owner->map = map;
    b->owner->map_len = map_len;
    return true;
}

/* A regular file is mapped, not copied: the page cache already holds it, and a 1 GB
 * snapshot should not cost a 1 GB copy before parsing starts. */
static sd_status map_path(const char *path, uint64_t max, sd_bytes *out, sd_error *err)
{
    memset(out, 0, sizeof *out);
    /* O_NONBLOCK so that a FIFO with no writer cannot hang the open; reads block again
     * below, and a FIFO nobody writes to reads as empty. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return fail_io(err, path, "cannot open");
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return fail_io(err, path, "cannot stat");
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        sdp_error_set_source(err, path);
        return sdp_fail(err, SD_EIO, SD_NO_OFFSET, "is a directory");
    }
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode)) {
        /* /dev/zero and friends never end: files, pipes and stdin only. */
        close(fd);
        sdp_error_set_source(err, path);
        return sdp_fail(err, SD_EIO, SD_NO_OFFSET, "is a device, not a snapshot file "
                        "(pipe it through standard input to read it anyway)");
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size <= max &&
        (uint64_t)st.st_size <= SIZE_MAX) {
        /* Not MAP_POPULATE: the parser reads the mapping once, front to back, and drops
         * what it has read, so only a window of the file is ever resident. */
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            close(fd);
            madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
            out->data = p;
            out->len = (size_t)st.st_size;
            if (own(out, NULL, p, (size_t)st.st_size)) return SD_OK;
            munmap(p, (size_t)st.st_size);
            memset(out, 0, sizeof *out);
            sdp_error_set_source(err, path);
            return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        }
    }
    uint64_t hint = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
    uint8_t *buf;
    size_t len;
    sd_status s = read_fd(fd, hint, max, path, &buf, &len, err);
    close(fd);
    if (s == SD_OK) {
        out->data = buf;
        out->len = len;
        if (!own(out, buf, NULL, 0)) {
            free(buf);
            memset(out, 0, sizeof *out);
            sdp_error_set_source(err, path);
            return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        }
    }
    return s;
}

void sd_bytes_release(sd_bytes *b)
{
    if (!b) return;
    if (b->owner) {
        if (b->owner->map) munmap(b->owner->map, b->owner->map_len);
        free(b->owner->heap);
        free(b->owner);
    }
    memset(b, 0, sizeof *b);
}

bool sdp_bytes_mapped(const sd_bytes *b) { return b && b->owner && b->owner->map; }

/* buf becomes b's (freed here when that fails). */
static sd_status bytes_from_heap(sd_bytes *b, uint8_t *buf, size_t len, const char *name,
                                 sd_error *err)
{
    memset(b, 0, sizeof *b);
    b->data = buf;
    b->len = len;
    if (own(b, buf, NULL, 0)) return SD_OK;
    free(buf);
    memset(b, 0, sizeof *b);
    sdp_error_set_source(err, name);
    return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
}

/* ---------- gzip ---------- */

static bool is_gzip(const uint8_t *b, size_t n) { return n >= 2 && b[0] == 0x1f && b[1] == 0x8b; }
bool sdp_src_is_zip(const uint8_t *b, size_t n)
{
    return n >= 4 && b[0] == 'P' && b[1] == 'K' &&
           ((b[2] == 3 && b[3] == 4) || (b[2] == 5 && b[3] == 6));
}

uint64_t sdp_src_ratio_cap(uint64_t compressed, uint64_t max)
{
    uint64_t cap = compressed > UINT64_MAX / SDP_MAX_RATIO ? UINT64_MAX : compressed * SDP_MAX_RATIO;
    if (cap < SDP_RATIO_FREE_BYTES) cap = SDP_RATIO_FREE_BYTES;
    return cap < max ? cap : max;
}

/* Output bytes are only counted, not kept, once the caller's buffer is full. */
#define SCRATCH_BYTES (64u << 10)

static uInt clamp_uint(uint64_t n) { return n > UINT32_MAX ? UINT32_MAX : (uInt)n; }

static sd_status refuse_gzip(sd_error *err, const char *source, size_t in_len, uint64_t cap,
                             uint64_t max)
{
    sdp_error_set_source(err, source);
    if (cap < max)
        return sdp_fail(err, SD_ELIMIT, SD_NO_OFFSET,
                        "gzip expands more than %u:1 (%llu compressed bytes, past %llu): "
                        "refusing a decompression bomb", SDP_MAX_RATIO,
                        (unsigned long long)in_len, (unsigned long long)cap);
    return sdp_fail(err, SD_ELIMIT, SD_NO_OFFSET,
                    "gzip expands past the memory budget of %llu bytes (raise "
                    "--max-memory if it is genuine)", (unsigned long long)cap);
}

/* One streaming pass over every gzip member: the first dst_cap output bytes land in dst,
 * the rest in a small scratch window where they are only counted. It stops as soon as
 * the count passes `cap`, so a bomb costs at most `cap` bytes of inflating and never
 * more memory than dst_cap plus the window. *total is the whole output size on success. */
static sd_status inflate_pass(const uint8_t *in, size_t in_len, uint8_t *dst, size_t dst_cap,
                              uint64_t cap, uint64_t max, const char *source,
                              uint64_t *total, sd_error *err)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
        return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "cannot start zlib");
    uint8_t *scratch = NULL;
    sd_status st = SD_OK;
    uint64_t n = 0;
    zs.next_in = (Bytef *)in;
    zs.avail_in = clamp_uint(in_len);
    for (;;) {
        if (n >= dst_cap && !scratch && !(scratch = malloc(SCRATCH_BYTES))) {
            st = sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory inflating");
            break;
        }
        uInt room = n < dst_cap ? clamp_uint(dst_cap - n) : SCRATCH_BYTES;
        zs.next_out = n < dst_cap ? dst + n : scratch;
        zs.avail_out = room;
        int zr = inflate(&zs, Z_NO_FLUSH);
        n += room - zs.avail_out;
        if (n > cap) {
            st = refuse_gzip(err, source, in_len, cap, max);
            break;
        }
        size_t consumed = (size_t)((const uint8_t *)zs.next_in - in);
        if (zr == Z_STREAM_END) {
            /* Concatenated members, as `cat a.gz b.gz` makes, continue the stream. */
            if (consumed < in_len && is_gzip(in + consumed, in_len - consumed)) {
                inflateReset(&zs);
                zs.next_in = (Bytef *)(in + consumed);
                zs.avail_in = clamp_uint(in_len - consumed);
                continue;
            }
            break;
        }
        if (zr == Z_BUF_ERROR && zs.avail_in == 0) {
            if (consumed >= in_len) {
                sdp_error_set_source(err, source);
                st = sdp_fail(err, SD_ETRUNC, consumed, "gzip stream is truncated");
                break;
            }
            zs.avail_in = clamp_uint(in_len - consumed);
            continue;
        }
        if (zr != Z_OK && zr != Z_BUF_ERROR) {
            sdp_error_set_source(err, source);
            st = sdp_fail(err, SD_EFORMAT, consumed, "corrupt gzip data: %s",
                          zs.msg ? zs.msg : "inflate failed");
            break;
        }
    }
    inflateEnd(&zs);
    free(scratch);
    *total = n;
    return st;
}

/* The size the gzip trailer claims: ISIZE of the last member (its size mod 2^32). Only a
 * hint: a truncated file ends in other bytes, a hostile one may lie, members may follow
 * one another. */
static uint64_t gzip_size_hint(const uint8_t *in, size_t in_len)
{
    if (in_len < 18) return 0;
    const uint8_t *t = in + in_len - 4;
    return (uint64_t)t[0] | (uint64_t)t[1] << 8 | (uint64_t)t[2] << 16 | (uint64_t)t[3] << 24;
}

/* Inflate every gzip member in turn, never past the cap. The bound is checked before any
 * memory is committed: the buffer is sized from the trailer when that is under the cap
 * (one pass, the usual case); otherwise the first pass only measures the stream (and
 * refuses a bomb as soon as it passes the cap) and a second one fills an exact buffer. */
static sd_status gunzip(const uint8_t *in, size_t in_len, uint64_t max, const char *source,
                        uint8_t **out, size_t *out_len, sd_error *err)
{
    uint64_t cap = sdp_src_ratio_cap(in_len, max);
    uint64_t hint = gzip_size_hint(in, in_len);
    size_t first = hint <= cap && hint <= SIZE_MAX ? (size_t)hint : 0;
    uint8_t *buf = malloc(first ? first : 1);
    if (!buf && first) {
        /* A trailer of junk (a truncated file) may claim more than the address space
         * allows: measure first instead, so that the file's real fault is reported. */
        first = 0;
        buf = malloc(1);
    }
    if (!buf) return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    uint64_t total = 0;
    sd_status st = inflate_pass(in, in_len, buf, first, cap, max, source, &total, err);
    if (st == SD_OK && total > first) {
        /* The trailer undersold the stream (several members, or a lie): now it is
         * measured, and under the cap. */
        uint8_t *nb = total <= SIZE_MAX ? realloc(buf, (size_t)total) : NULL;
        if (!nb)
            st = sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory inflating");
        else {
            buf = nb;
            st = inflate_pass(in, in_len, buf, (size_t)total, cap, max, source, &total, err);
        }
    }
    if (st) {
        free(buf);
        return st;
    }
    *out = buf;
    *out_len = (size_t)total;
    return SD_OK;
}

/* ---------- directories ---------- */

static int cmp_member(const void *a, const void *b)
{
    return strcmp(((const sdp_member *)a)->name, ((const sdp_member *)b)->name);
}

/* A directory of CI artifacts holds other files beside the snapshots: one whose first
 * bytes are surely no pickle (sniff.c) is left out and noted, so that one README does not
 * fail the whole directory. Compressed files are kept: they are judged once inflated. */
static bool dir_skips(sd_input *in, const char *name, const char *full)
{
    uint8_t head[512];
    int fd = open(full, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return false;                 /* reading it later says why */
    ssize_t got = pread(fd, head, sizeof head, 0);
    close(fd);
    return got >= 0 && sdp_sniff_skip(in, name, head, (size_t)got);
}

/* A job's artifact directory often holds one folder per rank (rank0/..., rank1/...):
 * folders are read too, this many levels down. Symbolic links to folders are not
 * followed, so a link back up cannot loop. */
enum { DIR_MAX_DEPTH = 4 };

static sd_status walk_dir(sd_input *in, const char *top, const char *path, int depth,
                          bool skip_others, sd_error *err)
{
    DIR *d = opendir(path);
    if (!d) return depth == 0 ? fail_io(err, path, "cannot open directory") : SD_OK;
    struct dirent *e;
    sd_status st = SD_OK;
    while (st == SD_OK && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char *full = sdp_src_join2(path, sdp_src_ends_with(path, "/") ? "" : "/", e->d_name);
        struct stat sb, lsb;
        if (!full) {
            st = sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
            break;
        }
        if (lstat(full, &lsb) == 0 && S_ISDIR(lsb.st_mode)) {
            if (depth < DIR_MAX_DEPTH) st = walk_dir(in, top, full, depth + 1, skip_others, err);
            free(full);
            continue;
        }
        if (stat(full, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            free(full);
            continue;
        }
        if (skip_others && dir_skips(in, e->d_name, full)) {   /* README, log, image */
            free(full);
            continue;
        }
        if (in->n_members >= in->max_members) {
            free(full);
            sdp_error_set_source(err, top);
            st = sdp_fail(err, SD_ELIMIT, SD_NO_OFFSET, "directory has more than %u files",
                          in->max_members);
            break;
        }
        if (!sdp_src_add_member(in, dup_str(full), full, 0))
            st = sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    }
    closedir(d);
    return st;
}

static sd_status open_dir(sd_input *in, const char *path, bool skip_others, sd_error *err)
{
    sd_status st = walk_dir(in, path, path, 0, skip_others, err);
    if (st == SD_OK && in->n_members == 0) {
        sdp_sniff_sort_skipped(in);
        sdp_error_set_source(err, path);
        st = in->n_skipped ? sdp_fail(err, SD_EFORMAT, SD_NO_OFFSET, "directory holds no "
                                      "snapshot, only %s", in->skipped)
                           : sdp_fail(err, SD_EIO, SD_NO_OFFSET, "directory holds no files");
    }
    if (in->n_members > 1) qsort(in->members, in->n_members, sizeof *in->members, cmp_member);
    return st;
}

/* ---------- public ---------- */

static sd_status open_file(sd_input *in, const char *path, const char *want, sd_error *err)
{
    /* Peek at the magic first: only an archive needs its bytes now. */
    uint8_t magic[4] = {0};
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return fail_io(err, path, "cannot open");
    struct stat sb;
    ssize_t got = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? pread(fd, magic, 4, 0) : 0;
    close(fd);
    if (got == 4 && sdp_src_is_zip(magic, 4)) {
        sd_status st = map_path(path, in->max_bytes, &in->zip_bytes, err);
        if (st) return st;
        in->kind = SDP_KIND_ZIP;
        in->zip_len = in->zip_bytes.len;
        return sdp_zip_open(in, path, want, err);
    }
    in->kind = SDP_KIND_FILE;
    return sdp_src_add_member(in, dup_str(path), dup_str(path), 0)
               ? SD_OK : sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
}

/* "ARCHIVE:member": only when the whole spec is not itself a path. */
static bool split_member(const char *spec, char **archive, const char **member_name)
{
    struct stat sb;
    if (stat(spec, &sb) == 0) return false;
    for (const char *colon = strrchr(spec, ':'); colon; ) {
        size_t n = (size_t)(colon - spec);
        char *a = malloc(n + 1);
        if (!a) return false;
        memcpy(a, spec, n);
        a[n] = '\0';
        if (stat(a, &sb) == 0) {
            *archive = a;
            *member_name = colon + 1;
            return true;
        }
        free(a);
        const char *prev = NULL;
        for (const char *q = spec; q < colon; q++) if (*q == ':') prev = q;
        colon = prev;
    }
    return false;
}

static sd_status select_member(sd_input *in, const char *spec, const char *archive,
                               const char *want, sd_error *err)
{
    for (size_t i = 0; i < in->n_members; i++) {
        const char *name = in->members[i].name;
        size_t skip = strlen(archive);
        const char *inner = name + skip + (name[skip] == ':' || name[skip] == '/' ? 1 : 0);
        if (strcmp(inner, want) == 0 || strcmp(name, spec) == 0) {
            sdp_member keep = in->members[i];
            for (size_t k = 0; k < in->n_members; k++)
                if (k != i) { free(in->members[k].name); free(in->members[k].path); }
            in->members[0] = keep;
            in->n_members = 1;
            return SD_OK;
        }
    }
    sdp_error_set_source(err, spec);
    return sdp_fail(err, SD_EIO, SD_NO_OFFSET, "no member named '%s' in %s", want, archive);
}

sd_status sd_input_options_init(sd_input_options *opts, unsigned version)
{
    static const sd_input_options tmpl = SD_INPUT_OPTIONS_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_INPUT_OPTIONS_VERSION);
}

sd_input *sd_input_open(const char *spec, const sd_input_options *opts, sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(opts, SD_INPUT_OPTIONS_VERSION, "sd_input_options", err)) return NULL;
    sd_input *in = calloc(1, sizeof *in);
    if (!in) {
        sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        return NULL;
    }
    in->max_bytes = opts && opts->max_memory ? opts->max_memory : SDP_DEFAULT_MAX_BYTES;
    in->max_members = opts && opts->max_members ? opts->max_members : SDP_DEFAULT_MAX_MEMBERS;
    in->skip_summaries = opts && opts->skip_summaries;
    in->spec_path = dup_str(spec);
    sd_status st;
    char *archive = NULL;
    const char *want = NULL;
    struct stat sb;
    if (strcmp(spec, "-") == 0) {
        in->kind = SDP_KIND_STDIN;
        st = sdp_src_add_member(in, dup_str("<stdin>"), NULL, 0) ? SD_OK
             : sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    } else if (split_member(spec, &archive, &want)) {
        in->skip_summaries = false;   /* the member was named: read it, whatever it is */
        bool dir = stat(archive, &sb) == 0 && S_ISDIR(sb.st_mode);
        st = dir ? open_dir(in, archive, false, err) : open_file(in, archive, want, err);
        if (st == SD_OK && (dir || in->kind == SDP_KIND_ZIP)) st = select_member(in, spec, archive, want, err);
        else if (st == SD_OK) { /* "file:x" where file is no archive */
            sdp_error_set_source(err, spec);
            st = sdp_fail(err, SD_EIO, SD_NO_OFFSET, "%s is not an archive or directory", archive);
        }
        free(archive);
    } else if (stat(spec, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        in->kind = SDP_KIND_DIR;
        st = open_dir(in, spec, true, err);
    } else {
        st = open_file(in, spec, NULL, err);
    }
    if (st != SD_OK) {
        sd_input_free(in);
        return NULL;
    }
    sdp_sniff_sort_skipped(in);
    return in;
}

void sd_input_free(sd_input *in)
{
    if (!in) return;
    for (size_t i = 0; i < in->n_members; i++) {
        free(in->members[i].name);
        free(in->members[i].path);
    }
    free(in->members);
    free(in->skip_list);
    if (in->zip) zip_discard(in->zip);
    sd_bytes_release(&in->zip_bytes);
    free(in->spec_path);
    free(in);
}

bool sdp_input_reads_in_parallel(const sd_input *in) { return in->kind == SDP_KIND_DIR; }

size_t sd_input_count(const sd_input *in) { return in->n_members; }
size_t sd_input_skipped_count(const sd_input *in) { return in->n_skipped; }
const char *sd_input_skipped(const sd_input *in) { return in->skipped; }

const char *sd_input_name(const sd_input *in, size_t i)
{
    return i < in->n_members ? in->members[i].name : NULL;
}

/* One level of gzip inside any member (rank.pickle.gz inside a zip, or on disk). */
static sd_status maybe_gunzip(const char *name, uint64_t max, sd_bytes *b, sd_error *err)
{
    if (sdp_src_is_zip(b->data, b->len)) {
        sdp_error_set_source(err, name);
        return sdp_fail(err, SD_EFORMAT, 0, "a zip archive inside an archive is not supported");
    }
    if (!is_gzip(b->data, b->len)) return SD_OK;
    uint8_t *plain = NULL;
    size_t plain_len = 0;
    sd_status st = gunzip(b->data, b->len, max, name, &plain, &plain_len, err);
    sd_bytes_release(b);
    if (st) return st;
    return bytes_from_heap(b, plain, plain_len, name, err);
}

sd_status sd_input_read(sd_input *in, size_t i, sd_bytes *out, sd_error *err)
{
    sd_error_clear(err);
    memset(out, 0, sizeof *out);
    if (i >= in->n_members) return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "no member %zu", i);
    const sdp_member *m = &in->members[i];
    sd_status st;
    uint8_t *buf = NULL;
    size_t len = 0;
    if (in->kind == SDP_KIND_ZIP) {
        st = sdp_zip_read(in, i, &buf, &len, err);
        if (st == SD_OK) st = bytes_from_heap(out, buf, len, m->name, err);
    } else if (in->kind == SDP_KIND_STDIN) {
        st = read_fd(STDIN_FILENO, 0, in->max_bytes, "<stdin>", &buf, &len, err);
        if (st == SD_OK) st = bytes_from_heap(out, buf, len, "<stdin>", err);
    } else {
        st = map_path(m->path, in->max_bytes, out, err);
    }
    if (st == SD_OK) st = maybe_gunzip(m->name, in->max_bytes, out, err);
    if (st == SD_OK) st = sdp_sniff_check(out->data, out->len, m->name, err);  /* sniff.c */
    if (st != SD_OK) {
        sdp_error_set_source(err, m->name);
        sd_bytes_release(out);
    }
    return st;
}
