/* summary.h - a snapshot's baseline summary: small enough to commit, exact enough to diff.
 *
 * `snapdiff summarize FILE -o base.sdsum` writes one; anything that loads a snapshot
 * (sd_snapshot_load_*) loads a summary too, so that diff, check and series take it
 * wherever they take a snapshot, with the same results. The format (MessagePack, written
 * with msgpack-c; docs/summary.md) is
 *
 *     ["snapdiff.summary", VERSION, {body}]
 *
 * and the body holds two things:
 *   - the model, minus what no diff needs: every device's segments and blocks (address,
 *     size, requested size, state, stack), the stacks and frames those reference (with
 *     their context), the allocator settings, annotations and warnings, and of the trace
 *     only the entries diff, check and frag read: those from the first `oom` entry on
 *     (their replay explains the oom) and the newest-timed entry. So every figure of a
 *     diff is computed the same way from the same data; ids are renumbered in order.
 *   - a digest for people and jq (`snapdiff dump base.sdsum`): per-device totals (with
 *     the whole trace's entry counts), every group under every group-by key with its
 *     bytes, blocks, requested bytes and representative stack, and the fragmentation
 *     figures. Readers of the model ignore it.
 *
 * A summary keeps no trace to replay and its trace counts are the digest's: the commands
 * that show the trace (stats, trace, frag, report) ask for the snapshot itself.
 *
 * This header is the format (its name, version and how it is recognised); writing one is
 * summarize.h's, showing one as JSON render_summary.h's.
 */
#ifndef SNAPDIFF_SUMMARY_H
#define SNAPDIFF_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SD_SUMMARY_VERSION 1          /* the format written; readers refuse newer ones */
#define SD_SUMMARY_MAGIC "snapdiff.summary"

/* Do these bytes start like a summary (of any version)? */
bool sd_summary_sniff(const uint8_t *data, size_t len);

#ifdef __cplusplus
}
#endif

#endif
