/* diff_kept.c - which live blocks of NEW were already live in OLD.
 *
 * A block is kept when OLD has a live block on the same device with the same address, size
 * and stack. Old blocks go into a hash table on (device, address, size); each new block
 * looks there and compares stacks by content. Stacks are interned by content within a
 * snapshot, so once a new stack id has been found equal to an old one that pair is cached
 * and later blocks with that stack compare two integers.
 */
#include <stdlib.h>

#include "analysis/diff_internal.h"

enum { STACK_UNMAPPED = UINT32_MAX };

typedef struct kept_entry {
    const sd_block *block;
    uint32_t device;       /* slot in the diff's device array */
    bool used;
} kept_entry;

typedef struct kept_ctx {
    const sd_snapshot *old_snap, *new_snap;
    sd_diff_device *devices;
    size_t n_devices;
    kept_entry *entries;
    sdp_htab index;        /* (device, address, size) -> entry */
    uint32_t *new_to_old;  /* new stack id -> the old stack id of equal content */
    size_t n_new_stacks;
    const sd_profile *profile;  /* with kept_by_key: new stack -> group key */
    uint64_t *kept_by_key;
} kept_ctx;

/* Block addresses differ mostly in their high bits (512-byte aligned and up): the table
 * folds the high half of the hash into the slot (sdp_htab_slot). Folding it here as well
 * would undo that (x ^ x>>32, twice, is x again). */
static uint64_t block_hash(uint32_t device, const sd_block *b)
{
    return sdp_hash_mix(sdp_hash_mix(sdp_hash_mix(SDP_HASH_SEED, device), b->address), b->size);
}

/* The slot of a device as OLD or NEW numbers it (the diff may pair two one-device files
 * whose ordinals differ: sd_diff_device.device_new). */
static uint32_t device_slot(const kept_ctx *k, int64_t ordinal, bool is_new)
{
    for (size_t i = 0; i < k->n_devices; i++)
        if (is_new ? k->devices[i].in_new && k->devices[i].device_new == ordinal
                   : k->devices[i].device == ordinal)
            return (uint32_t)i;
    return 0; /* not reached for a device with blocks: the caller lists every such one */
}

static bool stacks_equal(kept_ctx *k, uint32_t old_id, uint32_t new_id)
{
    bool cached = new_id < k->n_new_stacks;
    if (cached && k->new_to_old[new_id] != STACK_UNMAPPED)
        return k->new_to_old[new_id] == old_id;
    size_t na, nb;
    const uint32_t *fa = sd_snapshot_stack(k->old_snap, old_id, &na);
    const uint32_t *fb = sd_snapshot_stack(k->new_snap, new_id, &nb);
    if (na != nb) return false;
    for (size_t i = 0; i < na; i++) {
        const sd_frame *x = sd_snapshot_frame(k->old_snap, fa[i]);
        const sd_frame *y = sd_snapshot_frame(k->new_snap, fb[i]);
        if (x->line != y->line || strcmp(x->name, y->name) || strcmp(x->filename, y->filename))
            return false;
    }
    if (cached) k->new_to_old[new_id] = old_id;
    return true;
}

/* Count the ALLOCATED blocks of one side as all added (new) or all freed (old). */
static size_t count_live(kept_ctx *k, const sd_snapshot *s, bool is_new)
{
    size_t total = 0;
    for (size_t i = 0; s && i < sd_snapshot_device_count(s); i++) {
        const sd_cuda_device *dev = sd_snapshot_device(s, i);
        sd_diff_counts *c = &k->devices[device_slot(k, dev->device, is_new)].blocks;
        for (size_t b = 0; b < dev->n_blocks; b++) {
            if (dev->blocks[b].state != SD_BLOCK_ALLOCATED) continue;
            if (is_new) c->added++;
            else c->freed++;
            total++;
        }
    }
    return total;
}

static void insert_old(kept_ctx *k)
{
    size_t n = 0;
    for (size_t i = 0; i < sd_snapshot_device_count(k->old_snap); i++) {
        const sd_cuda_device *dev = sd_snapshot_device(k->old_snap, i);
        uint32_t di = device_slot(k, dev->device, false);
        for (size_t b = 0; b < dev->n_blocks; b++) {
            const sd_block *blk = &dev->blocks[b];
            if (blk->state != SD_BLOCK_ALLOCATED) continue;
            /* The table was sized for every old block: no growth, no rehash. */
            k->entries[n] = (kept_entry){blk, di, false};
            size_t j = sdp_htab_first(&k->index, block_hash(di, blk));
            while (k->index.slots[j]) j = sdp_htab_next(&k->index, j);
            sdp_htab_put(&k->index, j, (uint32_t)n++);
        }
    }
}

/* Find an unused old block equal to b; mark it used. */
static bool take_old(kept_ctx *k, uint32_t di, const sd_block *b)
{
    const sdp_htab *t = &k->index;
    for (size_t j = sdp_htab_first(t, block_hash(di, b)); t->slots[j]; j = sdp_htab_next(t, j)) {
        kept_entry *e = &k->entries[t->slots[j] - 1];
        if (e->used || e->device != di || e->block->address != b->address ||
            e->block->size != b->size || !stacks_equal(k, e->block->stack, b->stack))
            continue;
        e->used = true;
        return true;
    }
    return false;
}

static void match_new(kept_ctx *k)
{
    for (size_t i = 0; i < sd_snapshot_device_count(k->new_snap); i++) {
        const sd_cuda_device *dev = sd_snapshot_device(k->new_snap, i);
        uint32_t di = device_slot(k, dev->device, true);
        sd_diff_counts *c = &k->devices[di].blocks;
        for (size_t b = 0; b < dev->n_blocks; b++) {
            const sd_block *blk = &dev->blocks[b];
            if (blk->state != SD_BLOCK_ALLOCATED || !take_old(k, di, blk)) continue;
            c->kept++;
            c->added--;
            c->freed--;
            if (k->kept_by_key) {
                uint32_t key = sd_profile_stack_key(k->profile, 1, blk->stack);
                if (key < sd_profile_key_count(k->profile))
                    k->kept_by_key[(size_t)key * k->n_devices + di]++;
            }
        }
    }
}

static void *charged_calloc(sdp_arena *arena, size_t n, size_t elem)
{
    if (n == 0) n = 1;
    if (n > SIZE_MAX / elem || !sdp_arena_charge(arena, (uint64_t)n * elem)) return NULL;
    return calloc(n, elem);
}

sd_status sdp_kept_match(const sd_snapshot *old_snap, const sd_snapshot *new_snap,
                         sd_diff_device *devices, size_t n_devices,
                         const sd_profile *profile, uint64_t *kept_by_key, sdp_arena *arena,
                         sd_error *err)
{
    kept_ctx k = {.old_snap = old_snap, .new_snap = new_snap, .devices = devices,
                  .n_devices = n_devices, .profile = profile, .kept_by_key = kept_by_key};
    size_t n_old = count_live(&k, old_snap, false);
    count_live(&k, new_snap, true);
    if (!old_snap || n_old == 0) return SD_OK;
    if (n_old >= UINT32_MAX / 4)
        return sdp_fail(err, SD_ELIMIT, SD_NO_OFFSET, "too many live blocks to match");
    k.n_new_stacks = sd_snapshot_stack_count(new_snap);
    k.entries = charged_calloc(arena, n_old, sizeof *k.entries);
    k.new_to_old = charged_calloc(arena, k.n_new_stacks, sizeof *k.new_to_old);
    sd_status st = SD_OK;
    if (k.entries && k.new_to_old && sdp_htab_init(&k.index, n_old, arena) == SD_OK) {
        memset(k.new_to_old, 0xFF, k.n_new_stacks * sizeof *k.new_to_old);
        insert_old(&k);
        match_new(&k);
    } else {
        st = sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory matching kept blocks");
    }
    free(k.entries);
    sdp_htab_free(&k.index);
    free(k.new_to_old);
    return st;
}
