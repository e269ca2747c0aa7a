/* check_hash.c - the open-addressing table of src/base (sdp_htab) keeps short probe runs on
 * the keys snapdiff hashes most: block addresses, multiples of 512 (and of 2 MiB for
 * segments). Not a timing: the test counts probes. Before the slot folded the hash's high
 * half in, 2^18 such addresses averaged thousands of probes each (the diff of a 170 MB
 * snapshot pair spent minutes there). Private API: this test includes src/base/base.h. */
#include <check.h>
#include <stdlib.h>

#include "base/base.h"

typedef struct keys { const uint64_t *v; } keys;

static uint64_t hash_of_id(const void *ctx, uint32_t id)
{
    return sdp_hash_mix(SDP_HASH_SEED, ((const keys *)ctx)->v[id]);
}

/* Average probes per lookup after inserting n keys base + i * stride. */
static double average_probes(uint64_t base, uint64_t stride, uint32_t n)
{
    uint64_t *v = malloc(n * sizeof *v);
    ck_assert_ptr_nonnull(v);
    keys k = {v};
    sdp_htab t;
    ck_assert_int_eq(sdp_htab_init(&t, 1024, NULL), SD_OK);
    for (uint32_t i = 0; i < n; i++) {
        v[i] = base + i * stride;
        ck_assert_int_eq(sdp_htab_reserve_one(&t, hash_of_id, &k), SD_OK);
        size_t j = sdp_htab_first(&t, hash_of_id(&k, i));
        while (t.slots[j]) j = sdp_htab_next(&t, j);
        sdp_htab_put(&t, j, i);
    }
    uint64_t probes = 0;
    for (uint32_t i = 0; i < n; i++) {
        size_t j = sdp_htab_first(&t, hash_of_id(&k, i));
        for (probes++; t.slots[j] - 1 != i; j = sdp_htab_next(&t, j)) probes++;
    }
    sdp_htab_free(&t);
    free(v);
    return (double)probes / n;
}

static const struct { uint64_t base, stride; } key_shapes[] = {
    {0x7f0000000000ull, 512},          /* blocks packed in a segment */
    {0x7f0000000000ull, 2ull << 20},   /* segments, 2 MiB apart */
    {0x7f0000000000ull, 20ull << 20},  /* large-pool segments, 20 MiB apart */
    {0, 1},                            /* dense ids */
};

START_TEST(aligned_keys_probe_briefly)
{
    double avg = average_probes(key_shapes[_i].base, key_shapes[_i].stride, 1u << 18);
    /* Linear probing at load <= 1/2 with a good spread averages about 1.5. */
    ck_assert_msg(avg < 3.0, "stride %llu: %.1f probes per lookup on average",
                  (unsigned long long)key_shapes[_i].stride, avg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hash");
    TCase *tc = tcase_create("htab");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, aligned_keys_probe_briefly, 0,
                        (int)(sizeof key_shapes / sizeof key_shapes[0]));
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
