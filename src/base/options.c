/* options.c - the version check of the options structs callers fill (base.h). Each
 * struct's `unsigned version` is its first member, so a pointer to the struct is a
 * pointer to its version (C11 6.7.2.1p15). */
#include "base/base.h"

sd_status sdp_options_init(void *opts, size_t size, const void *tmpl, unsigned version,
                           unsigned newest)
{
    if (!opts || version == 0 || version > newest) return SD_EUSAGE;
    memcpy(opts, tmpl, size);
    *(unsigned *)opts = version;
    return SD_OK;
}

sd_status sdp_options_check(const void *opts, unsigned newest, const char *what,
                            sd_error *err)
{
    if (!opts) return SD_OK;
    unsigned version = *(const unsigned *)opts;
    if (version <= newest) return SD_OK;
    return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET,
                    "%s version %u is newer than this library knows (at most %u): the "
                    "program was built against a newer snapdiff",
                    what, version, newest);
}
