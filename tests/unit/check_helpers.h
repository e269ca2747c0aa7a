/* check_helpers.h - what every Check unit test shares (tests/unit/check_helpers.c, linked as
 * the static library sdp_test_helpers): loading fixtures, temporary files, and a main()
 * whose timeouts hold on a loaded machine.
 *
 * Fixture folders come from the build as string macros:
 *   SNAPDIFF_TESTDATA       the source tree's testdata/
 *   SNAPDIFF_UNIT_FIXTURES  the pickles tests/unit/make_unit_fixtures.py writes at build time */
#ifndef SNAPDIFF_CHECK_HELPERS_H
#define SNAPDIFF_CHECK_HELPERS_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "snapdiff/snapshot.h"

#define SDP_TEST_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The whole of the file at `path` in a malloc'd buffer (fails the test if unreadable). */
uint8_t *sdp_test_read_file(const char *path, size_t *len);

/* Load the snapshot at `path` through the one parse path every loader ends in (bytes in
 * memory), named `name` in messages (the path when NULL). The buffer is scribbled over
 * before it is freed: a snapshot must keep copies of what it needs. NULL with `err` set
 * when the load fails, for tests that expect it to. */
sd_snapshot *sdp_test_load(const char *path, const char *name, sd_error *err);

/* sdp_test_load that must succeed; the path is printf-style. */
sd_snapshot *sdp_test_load_ok(const char *path_fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* A new file under $TMPDIR (default /tmp) holding `n` bytes of `data`; the caller unlinks
 * and frees the returned path. */
char *sdp_test_write_temp(const void *data, size_t n);

/* Run the suite make() builds and return main()'s exit status. Check's own default of 4 s
 * per test fires on a loaded 2-core machine (and under sanitizers), so unless
 * CK_DEFAULT_TIMEOUT is set, each test gets SDP_TEST_TIMEOUT seconds; ctest's TIMEOUT
 * remains the bound on the whole binary. Tests should not call tcase_set_timeout. */
#define SDP_TEST_TIMEOUT 300
int sdp_test_main(Suite *(*make)(void));

#endif
