/* source_zip.c - zip archives: torch.save files and archives of many ranks.
 *
 * libzip does the reading; this file decides what is a member, refuses what libzip would
 * trust (overlapping entries, data past the end, encrypted or exotic members) and bounds
 * every member's size before and while it is inflated.
 */
#include <stdio.h>
#include <stdlib.h>
#include <zip.h>

#include "base/base.h"
#include "snapdiff/source.h"
#include "source/source_internal.h"

static sd_status zip_fail(sd_error *err, const char *source, sd_status code, const char *what)
{
    sdp_error_set_source(err, source);
    return sdp_fail(err, code, SD_NO_OFFSET, "%s", what);
}

/* libzip trusts the central directory; two entries sharing bytes (a classic bomb) or
 * pointing past the archive are refused here, from the directory itself. */
typedef struct zip_span { uint64_t start, end; } zip_span;

static int cmp_span(const void *a, const void *b)
{
    const zip_span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static sd_status check_zip_layout(const sd_input *in, const char *display, sd_error *err)
{
    const uint8_t *z = in->zip_bytes.data;
    size_t n = in->zip_len;
    if (n < 22) return zip_fail(err, display, SD_EFORMAT, "zip archive is truncated");
    size_t eocd = n - 22, stop = n > 22 + 65535 ? n - 22 - 65535 : 0;
    while (eocd > stop && !(z[eocd] == 'P' && z[eocd + 1] == 'K' && z[eocd + 2] == 5 && z[eocd + 3] == 6))
        eocd--;
    if (!(z[eocd] == 'P' && z[eocd + 1] == 'K' && z[eocd + 2] == 5 && z[eocd + 3] == 6))
        return SD_OK; /* libzip has already judged it; nothing more to check */
    sdp_cursor c = {.base = z, .len = n, .pos = eocd + 10};
    uint64_t entries = 0, cd_size = 0, cd_off = 0;
    sdp_cur_le(&c, 2, &entries);
    sdp_cur_le(&c, 4, &cd_size);
    sdp_cur_le(&c, 4, &cd_off);
    if (entries == 0xffff || cd_off == 0xffffffffu) return SD_OK; /* ZIP64: sizes fit anyway */
    if (cd_off > n || cd_size > n - cd_off)
        return zip_fail(err, display, SD_EFORMAT, "zip central directory lies outside the file");
    zip_span *spans = entries ? calloc((size_t)entries, sizeof *spans) : NULL;
    if (entries && !spans) return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    c.pos = (size_t)cd_off;
    sd_status st = SD_OK;
    size_t k = 0;
    for (; k < entries; k++) {
        uint64_t sig = 0, comp = 0, name_len = 0, extra_len = 0, comment_len = 0, local = 0;
        const uint8_t *skip;
        if (!sdp_cur_le(&c, 4, &sig) || sig != 0x02014b50) break;
        c.pos += 16;
        if (!sdp_cur_le(&c, 4, &comp) || !sdp_cur_le(&c, 4, &local) /* uncompressed size */ ||
            !sdp_cur_le(&c, 2, &name_len) || !sdp_cur_le(&c, 2, &extra_len) ||
            !sdp_cur_le(&c, 2, &comment_len))
            break;
        c.pos += 8;
        if (!sdp_cur_le(&c, 4, &local) ||
            !sdp_cur_bytes(&c, name_len + extra_len + comment_len, &skip))
            break;
        if (comp == 0xffffffffu || local == 0xffffffffu) break; /* ZIP64 entry: leave to libzip */
        spans[k].start = local;
        spans[k].end = local + 30 + comp;
        if (spans[k].end > n) {
            st = zip_fail(err, display, SD_EFORMAT, "a zip member's data lies past the end of the archive");
            break;
        }
    }
    if (!st && k > 1) {
        qsort(spans, k, sizeof *spans, cmp_span);
        for (size_t i = 1; i < k; i++)
            if (spans[i].start < spans[i - 1].end) {
                st = zip_fail(err, display, SD_EFORMAT, "zip members overlap (two entries share "
                              "the same bytes): refusing a crafted archive");
                break;
            }
    }
    free(spans);
    return st;
}

static sd_status open_zip_named(sd_input *in, const char *display, const char *errname,
                                const char *want, sd_error *err)
{
    zip_error_t zerr;
    zip_error_init(&zerr);
    zip_source_t *src = zip_source_buffer_create(in->zip_bytes.data, in->zip_len, 0, &zerr);
    if (src) in->zip = zip_open_from_source(src, ZIP_RDONLY, &zerr);
    if (!in->zip) {
        char text[200];
        snprintf(text, sizeof text, "not a readable zip archive: %s", zip_error_strerror(&zerr));
        if (src) zip_source_free(src);
        zip_error_fini(&zerr);
        return zip_fail(err, errname, SD_EFORMAT, text);
    }
    zip_error_fini(&zerr);
    sd_status layout = check_zip_layout(in, errname, err);
    if (layout) return layout;
    if (want) { /* ARCHIVE:member: only that one, however large the archive */
        zip_int64_t idx = zip_name_locate(in->zip, want, 0);
        if (idx < 0) {
            sdp_error_set_source(err, errname);
            return sdp_fail(err, SD_EIO, SD_NO_OFFSET, "no member named '%s'", want);
        }
        return sdp_src_add_member(in, sdp_src_join2(display, ":", want), NULL, (zip_uint64_t)idx)
                   ? SD_OK : sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    }
    zip_int64_t n = zip_get_num_entries(in->zip, 0);
    if (n < 0) n = 0;
    if ((uint64_t)n > in->max_members) {
        char text[200];
        snprintf(text, sizeof text, "zip archive has %lld entries, more than the limit of %u",
                 (long long)n, in->max_members);
        return zip_fail(err, errname, SD_ELIMIT, text);
    }
    /* torch.save: exactly one snapshot, the member ending in data.pkl. */
    for (zip_int64_t i = 0; i < n; i++) {
        const char *name = zip_get_name(in->zip, (zip_uint64_t)i, 0);
        if (name && (sdp_src_ends_with(name, "/data.pkl") || strcmp(name, "data.pkl") == 0))
            return sdp_src_add_member(in, sdp_src_join2(display, ":", name), NULL, (zip_uint64_t)i)
                       ? SD_OK : sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    }
    bool torch_like = false;
    for (zip_int64_t i = 0; i < n; i++) {
        const char *name = zip_get_name(in->zip, (zip_uint64_t)i, 0);
        if (!name || sdp_src_ends_with(name, "/")) continue;
        if (sdp_src_ends_with(name, "/version") || sdp_src_ends_with(name, "/byteorder") ||
            sdp_src_ends_with(name, "/.format_version")) {
            torch_like = true;
            continue;
        }
        if (sdp_sniff_skip_zip(in, name, (zip_uint64_t)i))
            continue;   /* a README or log in an archive of ranks (sniff.c) */
        if (!sdp_src_add_member(in, sdp_src_join2(display, ":", name), NULL, (zip_uint64_t)i))
            return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    }
    if (torch_like && in->n_members == 0)
        return zip_fail(err, errname, SD_ESNAPSHOT,
                        "looks like a torch.save archive but has no data.pkl member");
    if (in->n_members == 0 && in->n_skipped) {
        sdp_sniff_sort_skipped(in);
        sdp_error_set_source(err, errname);
        return sdp_fail(err, SD_EFORMAT, SD_NO_OFFSET, "zip archive holds no snapshot, only %s",
                        in->skipped);
    }
    if (in->n_members == 0) return zip_fail(err, errname, SD_ESNAPSHOT, "zip archive has no members");
    return SD_OK;
}

sd_status sdp_zip_open(sd_input *in, const char *display, const char *want, sd_error *err)
{
    /* Errors name what the user asked for: the member, when they named one. */
    char *asked = want ? sdp_src_join2(display, ":", want) : NULL;
    sd_status st = open_zip_named(in, display, asked ? asked : display, want, err);
    free(asked);
    return st;
}

sd_status sdp_zip_read(sd_input *in, size_t i, uint8_t **out, size_t *out_len,
                                 sd_error *err)
{
    const sdp_member *m = &in->members[i];
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(in->zip, m->index, 0, &st) != 0)
        return zip_fail(err, m->name, SD_EFORMAT, "cannot read the member's zip header");
    if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
        return zip_fail(err, m->name, SD_EREFUSED, "member is encrypted");
    if ((st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method != ZIP_CM_STORE &&
        st.comp_method != ZIP_CM_DEFLATE) {
        char text[120];
        snprintf(text, sizeof text, "unsupported zip compression method %u (stored and deflate "
                 "are supported)", (unsigned)st.comp_method);
        return zip_fail(err, m->name, SD_EFORMAT, text);
    }
    uint64_t comp = (st.valid & ZIP_STAT_COMP_SIZE) ? st.comp_size : in->zip_len;
    if (comp > in->zip_len)
        return zip_fail(err, m->name, SD_EFORMAT, "member's compressed size is larger than the archive");
    uint64_t cap = st.comp_method == ZIP_CM_STORE ? in->max_bytes : sdp_src_ratio_cap(comp, in->max_bytes);
    if (st.comp_method == ZIP_CM_STORE && (st.valid & ZIP_STAT_SIZE) && st.size != comp)
        return zip_fail(err, m->name, SD_EFORMAT, "stored member's sizes disagree");
    if (!(st.valid & ZIP_STAT_SIZE) || st.size > cap) {
        char text[200];
        snprintf(text, sizeof text, "member claims %llu bytes from %llu compressed: beyond the "
                 "limit of %llu (a zip bomb, or raise --max-memory)",
                 (unsigned long long)st.size, (unsigned long long)comp, (unsigned long long)cap);
        return zip_fail(err, m->name, SD_ELIMIT, text);
    }
    zip_file_t *zf = zip_fopen_index(in->zip, m->index, 0);
    if (!zf) {
        char text[200];
        snprintf(text, sizeof text, "cannot open member: %s", zip_strerror(in->zip));
        return zip_fail(err, m->name, SD_EFORMAT, text);
    }
    /* Read at most the declared size plus one byte: a member that inflates past what the
     * central directory says is lying, and we stop there. */
    uint8_t *buf = malloc((size_t)st.size + 1);
    if (!buf) {
        zip_fclose(zf);
        return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    }
    uint64_t got = 0;
    while (got <= st.size) {
        zip_int64_t r = zip_fread(zf, buf + got, st.size + 1 - got);
        if (r < 0) {
            char text[200];
            snprintf(text, sizeof text, "corrupt member: %s", zip_file_strerror(zf));
            free(buf);
            zip_fclose(zf);
            return zip_fail(err, m->name, SD_EFORMAT, text);
        }
        if (r == 0) break;
        got += (uint64_t)r;
    }
    zip_fclose(zf);
    if (got != st.size) {
        free(buf);
        return zip_fail(err, m->name, SD_EFORMAT, "member's data does not match its declared size");
    }
    *out = buf;
    *out_len = (size_t)got;
    return SD_OK;
}
