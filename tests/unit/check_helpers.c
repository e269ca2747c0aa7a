/* check_helpers.c - see check_helpers.h. */
#include "check_helpers.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint8_t *sdp_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    ck_assert_int_ge(n, 0);
    ck_assert_int_eq(fseek(f, 0, SEEK_SET), 0);
    uint8_t *buf = malloc(n ? (size_t)n : 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

sd_snapshot *sdp_test_load(const char *path, const char *name, sd_error *err)
{
    size_t n;
    uint8_t *buf = sdp_test_read_file(path, &n);
    sd_error_clear(err);
    sd_snapshot *s = sd_snapshot_load_buffer(buf, n, name ? name : path, NULL, err);
    memset(buf, 0xAB, n);
    free(buf);
    return s;
}

sd_snapshot *sdp_test_load_ok(const char *path_fmt, ...)
{
    char path[1024];
    va_list ap;
    va_start(ap, path_fmt);
    int k = vsnprintf(path, sizeof path, path_fmt, ap);
    va_end(ap);
    ck_assert_msg(k > 0 && (size_t)k < sizeof path, "fixture path too long");
    sd_error err;
    sd_snapshot *s = sdp_test_load(path, NULL, &err);
    ck_assert_msg(s != NULL, "%s: %s", path, err.text);
    return s;
}

char *sdp_test_write_temp(const void *data, size_t n)
{
    const char *dir = getenv("TMPDIR");
    char *path = malloc(4096);
    ck_assert_ptr_nonnull(path);
    snprintf(path, 4096, "%s/snapdiff-check-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    ck_assert_msg(fd >= 0, "mkstemp %s", path);
    const uint8_t *p = data;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        ck_assert_int_gt(w, 0);
        p += w;
        n -= (size_t)w;
    }
    close(fd);
    return path;
}

int sdp_test_main(Suite *(*make)(void))
{
    /* Read by tcase_create, so it must be set before make() builds the test cases. */
    char seconds[16];
    snprintf(seconds, sizeof seconds, "%d", SDP_TEST_TIMEOUT);
    setenv("CK_DEFAULT_TIMEOUT", seconds, 0);
    SRunner *sr = srunner_create(make());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
