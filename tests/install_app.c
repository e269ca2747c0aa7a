/* install_app.c - the smallest user of an installed libsnapdiff (tests/check_install.sh
 * builds it with nothing but `pkg-config --cflags --libs snapdiff`): load one snapshot
 * and print its totals, as `snapdiff stats --json` reports them under "total". */
#include <inttypes.h>
#include <stdio.h>

#include <snapdiff/snapshot.h>
#include <snapdiff/stats.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s SNAPSHOT\n", argv[0]);
        return 2;
    }
    sd_error err;
    sd_error_clear(&err);
    sd_snapshot *s = sd_snapshot_load_file(argv[1], NULL, &err);
    if (!s) {
        fprintf(stderr, "%s: %s\n", err.source, err.text);
        return 1;
    }
    sd_stats st;
    sd_stats_total(s, &st);
    printf("%s: %" PRIu64 " blocks, %" PRIu64 " bytes reserved, %" PRIu64 " allocated\n",
           SD_VERSION, st.blocks, st.reserved_bytes, st.allocated_bytes);
    sd_snapshot_free(s);
    return 0;
}
