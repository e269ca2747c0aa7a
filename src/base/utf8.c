/* utf8.c - UTF-8 validation (base.h): the pickle reader checks every string with it. */
#include "base/base.h"

/* UTF-8 as CPython's 'surrogatepass' accepts it: well-formed sequences, shortest form,
 * at most U+10FFFF; encoded surrogates (ED A0..BF xx) allowed. ASCII runs go 8 at a time. */
bool sdp_utf8_valid(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (!(w & 0x8080808080808080ull)) { i += 8; continue; }
        }
        uint8_t c = s[i];
        if (c < 0x80) { i++; continue; }
        size_t need;
        uint32_t cp;
        if (c >= 0xc2 && c <= 0xdf) { need = 1; cp = c & 0x1f; }
        else if (c >= 0xe0 && c <= 0xef) { need = 2; cp = c & 0x0f; }
        else if (c >= 0xf0 && c <= 0xf4) { need = 3; cp = c & 0x07; }
        else return false;
        if (n - i <= need) return false;
        for (size_t k = 1; k <= need; k++) {
            if ((s[i + k] & 0xc0) != 0x80) return false;
            cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        if ((need == 2 && cp < 0x800) || (need == 3 && (cp < 0x10000 || cp > 0x10ffff)))
            return false;
        i += need + 1;
    }
    return true;
}
