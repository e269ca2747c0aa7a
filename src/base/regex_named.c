/* regex_named.c - POSIX extended regular expressions with named groups (base.h).
 *
 * POSIX has no named groups: (?P<name>...) and (?<name>...) are rewritten as plain groups,
 * their names kept by group number. One parser for every option that takes such a pattern
 * (curve's --pattern, --name-pattern for the snapshot names of a job's folder). */
#include <stdlib.h>

#include "base/base.h"

sd_status sdp_named_regex_compile(const char *pat, const char *what, sdp_named_regex *out,
                                  sd_error *err)
{
    memset(out, 0, sizeof *out);
    size_t len = strlen(pat);
    char *plain = malloc(len + 1);
    if (!plain) return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    size_t o = 0, group = 0;
    bool bracket = false;
    for (size_t i = 0; i < len; i++) {
        char c = pat[i];
        if (c == '\\' && i + 1 < len) {
            plain[o++] = c;
            plain[o++] = pat[++i];
            continue;
        }
        if (bracket) {
            if (c == ']') bracket = false;
            plain[o++] = c;
            continue;
        }
        if (c == '[') {
            bracket = true;
            plain[o++] = c;
            if (i + 1 < len && pat[i + 1] == '^') plain[o++] = pat[++i];
            if (i + 1 < len && pat[i + 1] == ']') plain[o++] = pat[++i];
            continue;
        }
        plain[o++] = c;
        if (c != '(') continue;
        if (++group > SDP_REGEX_GROUPS) {
            free(plain);
            return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "%s: more than %d groups", what,
                            SDP_REGEX_GROUPS);
        }
        size_t k = i + 1;
        if (k < len && pat[k] == '?') {
            k++;
            if (k < len && pat[k] == 'P') k++;
            const char *gt = k < len && pat[k] == '<' ? strchr(pat + k, '>') : NULL;
            if (!gt) {
                free(plain);
                return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "%s: only (?P<name>...) or "
                                "(?<name>...) groups, no other (?...) (POSIX extended "
                                "regular expressions)", what);
            }
            size_t n = (size_t)(gt - (pat + k + 1));
            if (n >= sizeof out->name[group]) n = sizeof out->name[group] - 1;
            memcpy(out->name[group], pat + k + 1, n);
            out->name[group][n] = '\0';
            i = (size_t)(gt - pat);
        }
    }
    plain[o] = '\0';
    out->n_groups = group;
    int rc = regcomp(&out->re, plain, REG_EXTENDED);
    free(plain);
    if (rc != 0) {
        char why[128];
        regerror(rc, &out->re, why, sizeof why);
        regfree(&out->re);
        return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "%s: %s", what, why);
    }
    return SD_OK;
}

int sdp_named_regex_group(const sdp_named_regex *r, const char *name)
{
    for (size_t g = 1; g <= r->n_groups; g++)
        if (strcmp(r->name[g], name) == 0) return (int)g;
    return 0;
}
