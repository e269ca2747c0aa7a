/* fuzz_check.h - the fuzz targets' invariant check: a failed one aborts, which libFuzzer
 * saves as a crash artifact with the input that broke it. */
#ifndef SNAPDIFF_FUZZ_CHECK_H
#define SNAPDIFF_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond)                                                               \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #cond, __FILE__,    \
                    __LINE__);                                                          \
            abort();                                                                    \
        }                                                                               \
    } while (0)

#endif
