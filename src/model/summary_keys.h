/* summary_keys.h - the key of every map of a snapdiff summary (docs/summary.md), spelled
 * once: analysis/summary.c writes them and model/summary_read.c reads them, so the writer
 * and the reader cannot drift. SDP_SK_ is "summary key". String literals, so that a
 * reader can compare with sizeof(key) - 1 bytes. Changing one changes the format: a
 * reader skips a key it does not know, so a renamed key reads as absent. Not installed.
 */
#ifndef SNAPDIFF_MODEL_SUMMARY_KEYS_H
#define SNAPDIFF_MODEL_SUMMARY_KEYS_H

/* ---- the body: ["snapdiff.summary", VERSION, {body}] ---- */
#define SDP_SK_WRITER "writer"
#define SDP_SK_SOURCE "source"
#define SDP_SK_LEGACY_LIST "legacy_list"
#define SDP_SK_DIGEST "digest"
#define SDP_SK_STRINGS "strings"
#define SDP_SK_FRAMES "frames"
#define SDP_SK_STACKS "stacks"
#define SDP_SK_CONTEXTS "contexts"
#define SDP_SK_DEVICES "devices"            /* also the digest's per-device totals */
#define SDP_SK_SETTINGS "settings"
#define SDP_SK_ANNOTATIONS "annotations"
#define SDP_SK_WARNINGS "warnings"
#define SDP_SK_HOST "host"
#define SDP_SK_SKIP_ACTIONS "skip_actions"
#define SDP_SK_LABEL_PREFIX "label_prefix"

/* ---- a device (the host's: segments and blocks only) ---- */
#define SDP_SK_DEVICE "device"              /* also a digest device's, and frag's */
#define SDP_SK_SEGMENTS "segments"          /* also a digest figure */
#define SDP_SK_BLOCKS "blocks"              /* also a digest figure */
#define SDP_SK_TRACE_ENTRIES "trace_entries"   /* also a digest figure */
#define SDP_SK_TRACE "trace"

/* ---- settings ---- */
#define SDP_SK_ALLOC_CONF "alloc_conf"
#define SDP_SK_ROUNDUP "roundup_power2_divisions"
#define SDP_SK_RECORDED "recorded"

/* ---- the digest: devices, groups (keyed by sd_group_by_name), frag ----
 * Written for people and never read back: its figures are stats' and frag's JSON names. */
#define SDP_SK_GROUPS "groups"
#define SDP_SK_FRAG "frag"
#define SDP_SK_ALLOCATED_BYTES "allocated_bytes"
#define SDP_SK_RESERVED_BYTES "reserved_bytes"
#define SDP_SK_ACTIVE_BYTES "active_bytes"
#define SDP_SK_REQUESTED_BYTES "requested_bytes"
#define SDP_SK_PENDING_FREE_BYTES "pending_free_bytes"
#define SDP_SK_INACTIVE_BYTES "inactive_bytes"
#define SDP_SK_VERDICT "verdict"
#define SDP_SK_GAP_BYTES "gap_bytes"
#define SDP_SK_FREE_BYTES "free_bytes"
#define SDP_SK_LARGEST_FREE_BYTES "largest_free_bytes"
#define SDP_SK_FRAGMENTATION_INDEX "fragmentation_index"
#define SDP_SK_STRANDED_FREE_BYTES "stranded_free_bytes"
#define SDP_SK_STRANDED_INDEX "stranded_index"
#define SDP_SK_EMPTY_CACHE_RELEASABLE "empty_cache_releasable_bytes"

#endif
