/* replay.h - torch's CUDA caching allocator replayed from a snapshot's trace, and what
 * other PYTORCH_CUDA_ALLOC_CONF settings would have done with the same requests.
 *
 * Per device with a trace: the allocator's state at the trace's first entry is rebuilt
 * (segments then: those of the snapshot not created in the window plus those freed in it;
 * blocks live then: live blocks not allocated in the window plus blocks freed in it
 * without an alloc; free space: the gaps). Then:
 *  - fidelity: every `alloc` is placed by the model (a cached free block, which address;
 *    or a new segment) and compared with what the allocator recorded; the replay then
 *    follows the recorded choice, so one miss cannot cascade;
 *  - what-if: the model runs free from the same start, under the recorded settings and
 *    under each configuration given: peak and end reserved, segments created, retries,
 *    requests that run out of memory, stranded and largest free memory at the end.
 * The rules modelled, and those not, are listed in docs/json-replay.md. Limits: the
 * program is assumed to make the same requests in the same order (true when only the
 * allocator settings change); memory outside the caching allocator is not modelled.
 */
#ifndef SNAPDIFF_REPLAY_H
#define SNAPDIFF_REPLAY_H

#include <stdbool.h>
#include "common.h"
#include "snapshot.h"
#include "alloc.h"   /* the configuration and the records a replay reports */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sd_replay sd_replay;

/* Replay every device of `s` that has trace entries. `s` must outlive the result.
 * @return the replay, or NULL with err (SD_EUSAGE: a config that does not parse, or a
 * summary instead of a snapshot; SD_ENOMEM). */
sd_replay *sd_replay_create(const sd_snapshot *s, const sd_replay_options *opts, sd_error *err);
void sd_replay_free(sd_replay *r);

const sd_snapshot *sd_replay_snapshot(const sd_replay *r);
size_t sd_replay_device_count(const sd_replay *r);
/* The torch version whose option rules parsed the configs (sd_replay_options), 0 = newest. */
unsigned sd_replay_torch_version(const sd_replay *r);
const sd_replay_device *sd_replay_device_at(const sd_replay *r, size_t i);

#ifdef __cplusplus
}
#endif

#endif
