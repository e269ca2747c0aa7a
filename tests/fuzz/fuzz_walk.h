/* fuzz_walk.h - shared by the fuzz targets: visit every value of a parsed pickle through
 * the public accessors, once per container (memo-shared objects and cycles are visited
 * once), checking the invariants the accessors promise. A broken invariant aborts, which
 * libFuzzer reports as a crash with the input that caused it.
 */
#ifndef SNAPDIFF_FUZZ_WALK_H
#define SNAPDIFF_FUZZ_WALK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapdiff/pickle.h"

#include "fuzz_check.h"

/* ---- a set of container identities (open addressing, grows) ---- */

typedef struct fuzz_seen {
    const void **slots;
    size_t cap, n;
} fuzz_seen;

static size_t fuzz_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

/* Returns 1 when p was not in the set (and adds it), 0 when it was. */
static int fuzz_seen_add(fuzz_seen *s, const void *p)
{
    if (s->n * 2 >= s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 1024;
        const void **ns = calloc(ncap, sizeof *ns);
        FUZZ_CHECK(ns != NULL);
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->slots[i]) continue;
            size_t j = fuzz_hash(s->slots[i]) & (ncap - 1);
            while (ns[j]) j = (j + 1) & (ncap - 1);
            ns[j] = s->slots[i];
        }
        free(s->slots);
        s->slots = ns;
        s->cap = ncap;
    }
    size_t j = fuzz_hash(p) & (s->cap - 1);
    while (s->slots[j]) {
        if (s->slots[j] == p) return 0;
        j = (j + 1) & (s->cap - 1);
    }
    s->slots[j] = p;
    s->n++;
    return 1;
}

static void fuzz_seen_free(fuzz_seen *s)
{
    free(s->slots);
    memset(s, 0, sizeof *s);
}

/* UTF-8 as Python's surrogatepass writes it: shortest forms, up to U+10FFFF, surrogates
 * allowed. Written independently of the reader's own validator. */
static int fuzz_utf8_ok(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t k;
        uint32_t cp, min;
        if (c < 0x80) { i++; continue; }
        if (c >= 0xc2 && c <= 0xdf) { k = 1; cp = c & 0x1f; min = 0x80; }
        else if (c >= 0xe0 && c <= 0xef) { k = 2; cp = c & 0x0f; min = 0x800; }
        else if (c >= 0xf0 && c <= 0xf4) { k = 3; cp = c & 0x07; min = 0x10000; }
        else return 0;
        if (n - i - 1 < k) return 0;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xc0) != 0x80) return 0;
            cp = (cp << 6) | (s[i + j] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff) return 0;
        i += k + 1;
    }
    return 1;
}

typedef struct fuzz_walk_stats {
    uint64_t values, containers, items, bytes_sum;
} fuzz_walk_stats;

static void fuzz_touch_scalar(const sd_value *v, fuzz_walk_stats *st)
{
    size_t n = 0;
    const char *b;
    switch (sd_value_type_of(v)) {
    case SD_VALUE_NONE: break;
    case SD_VALUE_BOOL: st->bytes_sum += sd_value_bool(v); break;
    case SD_VALUE_INT: st->bytes_sum += (uint64_t)sd_value_int(v); break;
    case SD_VALUE_FLOAT: {
        double d = sd_value_float(v);
        unsigned char raw[sizeof d];
        memcpy(raw, &d, sizeof d);
        st->bytes_sum += raw[0];
        break;
    }
    case SD_VALUE_STR:
    case SD_VALUE_BYTES:
    case SD_VALUE_BIGINT:
        b = sd_value_bytes(v, &n);
        FUZZ_CHECK(n == 0 || b != NULL);
        if (sd_value_type_of(v) != SD_VALUE_BIGINT) FUZZ_CHECK(sd_value_len(v) == n);
        /* Read every byte so that ASan sees a pointer past its buffer. */
        for (size_t i = 0; i < n; i++) st->bytes_sum += (unsigned char)b[i];
        if (sd_value_type_of(v) == SD_VALUE_STR)
            FUZZ_CHECK(fuzz_utf8_ok((const unsigned char *)b, n));
        break;
    default:
        FUZZ_CHECK(!"unknown value type");
    }
}

/* Visit the tree under root; every container once. `input_len` bounds container offsets. */
static void fuzz_walk(const sd_value *root, uint64_t input_len, fuzz_walk_stats *st)
{
    fuzz_seen seen = {0};
    size_t cap = 256, sp = 0;
    const sd_value **stack = malloc(cap * sizeof *stack);
    FUZZ_CHECK(stack != NULL);
    stack[sp++] = root;
    while (sp) {
        const sd_value *v = stack[--sp];
        FUZZ_CHECK(v != NULL);
        st->values++;
        sd_value_type t = sd_value_type_of(v);
        if (t != SD_VALUE_LIST && t != SD_VALUE_TUPLE && t != SD_VALUE_DICT) {
            fuzz_touch_scalar(v, st);
            continue;
        }
        FUZZ_CHECK(sd_value_identity(v) != NULL);
        if (!fuzz_seen_add(&seen, sd_value_identity(v))) continue;
        st->containers++;
        FUZZ_CHECK(sd_value_offset(v) < input_len);
        size_t n = sd_value_len(v);
        size_t push = t == SD_VALUE_DICT ? 2 * n : n;
        if (sp + push > cap) {
            while (sp + push > cap) cap *= 2;
            const sd_value **ns = realloc(stack, cap * sizeof *stack);
            FUZZ_CHECK(ns != NULL);
            stack = ns;
        }
        for (size_t i = 0; i < n; i++) {
            st->items++;
            if (t == SD_VALUE_DICT) {
                const sd_value *k = sd_value_dict_key(v, i);
                const sd_value *val = sd_value_dict_val(v, i);
                stack[sp++] = k;
                stack[sp++] = val;
                /* Later keys win: the lookup must find this key's last value. */
                if (k && sd_value_type_of(k) == SD_VALUE_STR) {
                    size_t kn;
                    const char *kb = sd_value_bytes(k, &kn);
                    if (kn < 64 && !memchr(kb, '\0', kn)) {
                        char key[64];
                        memcpy(key, kb, kn);
                        key[kn] = '\0';
                        FUZZ_CHECK(sd_value_dict_get(v, key) != NULL);
                    }
                }
            } else {
                stack[sp++] = sd_value_item(v, i);
            }
        }
        if (t == SD_VALUE_DICT) (void)sd_value_dict_get(v, "segments");
    }
    free(stack);
    fuzz_seen_free(&seen);
}

#endif
