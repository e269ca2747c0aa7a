/* pickle.h - the embedded pickle reader: plain data only, never code.
 *
 * EXPERIMENTAL: no API or ABI promise (see snapdiff/experimental.h); not included by
 * <snapdiff/snapdiff.h>. The stable way to read a snapshot is snapshot.h.
 *
 * Decodes protocols 0-5 into a tree of immutable values held in one arena. Objects shared
 * through the pickle memo stay shared: two references to one memoized list are the same
 * sd_value. Object-building opcodes (GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ*, EXT*,
 * PERSID, out-of-band buffers) are refused with SD_EREFUSED; nothing is ever executed or
 * looked up.
 */
#ifndef SNAPDIFF_EXPERIMENTAL
#error "snapdiff/pickle.h is in libsnapdiff's experimental tier, with no API or ABI promise (docs/architecture.md, \"Tiers\"): define SNAPDIFF_EXPERIMENTAL before including it"
#endif

#ifndef SNAPDIFF_PICKLE_H
#define SNAPDIFF_PICKLE_H

#include <stdbool.h>
#include <stdio.h>
#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sd_pickle sd_pickle;
typedef struct sd_value sd_value;

typedef enum sd_value_type {
    SD_VALUE_NONE,
    SD_VALUE_BOOL,
    SD_VALUE_INT,     /* fits in int64 */
    SD_VALUE_BIGINT,  /* larger: little-endian two's complement bytes */
    SD_VALUE_FLOAT,
    SD_VALUE_STR,     /* UTF-8 (surrogates allowed, as Python's surrogatepass) */
    SD_VALUE_BYTES,
    SD_VALUE_LIST,    /* also sets and frozensets */
    SD_VALUE_TUPLE,
    SD_VALUE_DICT,
} sd_value_type;

#define SD_PICKLE_OPTIONS_VERSION 1
typedef struct sd_pickle_options {
    unsigned version;   /* SD_PICKLE_OPTIONS_VERSION (growable: common.h) */
    uint64_t max_memory;  /* arena budget in bytes; 0 = no budget beyond the input limits */
} sd_pickle_options;
#define SD_PICKLE_OPTIONS_INIT {SD_PICKLE_OPTIONS_VERSION, 0}
sd_status sd_pickle_options_init(sd_pickle_options *opts, unsigned version);

/* Parse one pickle from data[0..len). The tree keeps its own copies of strings, so the
 * bytes may be freed afterwards. Bytes after STOP are ignored; sd_pickle_trailing() says
 * how many.
 * @return the tree, or NULL with err filled (offset = where the bad opcode starts). */
sd_pickle *sd_pickle_parse(const uint8_t *data, size_t len, const sd_pickle_options *opts,
                           sd_error *err);
void sd_pickle_free(sd_pickle *p);

const sd_value *sd_pickle_root(const sd_pickle *p);
uint64_t sd_pickle_trailing(const sd_pickle *p);   /* bytes after STOP */
int sd_pickle_protocol(const sd_pickle *p);        /* PROTO value, 0 or 1 if none */
uint64_t sd_pickle_value_count(const sd_pickle *p); /* values created (for walk budgets) */

sd_value_type sd_value_type_of(const sd_value *v);
bool sd_value_bool(const sd_value *v);
int64_t sd_value_int(const sd_value *v);   /* ints and bools; 0 otherwise */
double sd_value_float(const sd_value *v);
/* str and bytes: pointer to the bytes (NUL-terminated, but may contain NULs) and their
 * length. bigint: its little-endian two's complement bytes. */
const char *sd_value_bytes(const sd_value *v, size_t *len);
/* list/tuple: item count; dict: pair count; str/bytes: byte length. */
size_t sd_value_len(const sd_value *v);
const sd_value *sd_value_item(const sd_value *v, size_t i);
const sd_value *sd_value_dict_key(const sd_value *v, size_t i);
const sd_value *sd_value_dict_val(const sd_value *v, size_t i);
/* Value of the last pair whose key is the str `key` (Python: later keys win), or NULL. */
const sd_value *sd_value_dict_get(const sd_value *v, const char *key);
/* Byte offset of the opcode that created a container (0 for scalars). */
uint64_t sd_value_offset(const sd_value *v);
/* Identity: equal for two references to one memoized object. */
const void *sd_value_identity(const sd_value *v);

/* Write v as JSON to out, as Python's json.dumps would see it: tuples and sets as arrays,
 * bytes as base64 strings, integers exact (bigints too), non-str dict keys as strings.
 * Shared objects are written at each reference; max_nodes bounds that expansion and the
 * nesting is bounded too, so a cycle or a "billion laughs" file ends in an error.
 * @return SD_OK, SD_ELIMIT (err names the container's offset) or SD_EIO (write failed). */
sd_status sd_value_write_json(const sd_value *v, FILE *out, uint64_t max_nodes, sd_error *err);

#ifdef __cplusplus
}
#endif

#endif
