/* emb_internal.h - the embedding role's private state, shared by the files of the embedding
   readers (emb_*.c: bottom emb_shard_cache, emb_memory_rows, emb_rows; then emb_map, emb_order; top emb_open,
   emb_read, emb_stream, emb_memory). */
#ifndef MIEB_EMB_EMB_INTERNAL_H
#define MIEB_EMB_EMB_INTERNAL_H

#include "embeddings.h"
#include "../hdf5/h5_util.h"

/** One file of a role: the single <role>.h5, or one shard. */
struct emb_shard {
    char *path;
    int64_t file_size;
    struct mieb_h5_ident ident;  /* the file checked at role open: a reopen must find it again */
    int64_t item_start, n_items; /* the items it holds: row_start / n_rows attributes */
    int64_t n_rows;              /* rows of its /embeddings */
    int64_t row_base;            /* global /embeddings row of its first row */
    enum mieb_emb_dtype dtype;
    bool has_row_index;
    int64_t *local_off;          /* [n_items+1] its /offsets (multi-vector), else NULL */
};

struct mieb_emb_role {
    char *task, *split, *subset, *role;
    struct mieb_emb_info info;
    struct emb_shard *sh; /* sorted by item_start; they cover [0, n_items) exactly once */
    int n_shards;
    bool sharded;         /* files are <role>-NNNNN-of-MMMMM.h5 (row_start, n_rows required) */
    int64_t *offsets;     /* [n_items+1] row offsets of the items in the split's order (multi-vector), else NULL */
    int64_t *file_item;   /* [n_items] when info.reordered: the global file item (shard order) of split item i */
    /* One open file at a time (reads are sequential, and roles may have many shards). */
    const void *mem;      /* a memory role's rows (emb_memory.h: one shard, no file), else NULL */
    const int64_t *mem_row_index; /* a memory role's split rows, or NULL */
    int cur;              /* shard index of the open file, -1 none */
    hid_t cur_file, cur_dset, cur_memtype;
};

/** The shard's local /embeddings row of its local item a: the item itself for single
 *  vectors, its /offsets entry for multi-vector roles (a == n_items gives the end). */
static inline int64_t mieb_emb_shard_row(const struct emb_shard *s, int64_t a)
{
    return s->local_off ? s->local_off[a] : a;
}

/** Make shard si the open file (with the HDF5 lock held; emb_shard_cache.c). */
mieb_status mieb_emb_shard_acquire(struct mieb_emb_role *r, int si);
/** The dtype of a file's /embeddings and the memory type that reads it without conversion. */
mieb_status mieb_emb_detect_dtype(hid_t file, hid_t ds, const char *fname, enum mieb_emb_dtype *dt, hid_t *memtype);
/** Close the open file, if any (with the HDF5 lock held). */
void mieb_emb_shard_release(struct mieb_emb_role *r);

/** Read local rows [row0, row0+nrows) of shard si as float32 into dst (HDF5 lock held),
 *  without the NaN / Inf check. */
mieb_status mieb_emb_read_shard_rows(struct mieb_emb_role *r, int si, int64_t row0, int64_t nrows, float *dst);

/** emb_memory_rows.c: a memory role's rows [row0, row0+nrows) as float32 into dst (no NaN / Inf
 *  check), and its float32 rows in place (m->data NULL for a 16-bit array, which is converted). */
mieb_status mieb_emb_memory_rows(const struct mieb_emb_role *r, int64_t row0, int64_t nrows, float *dst);
void mieb_emb_memory_map(const struct mieb_emb_role *r, int64_t r0, int64_t r1, struct mieb_emb_map *m);

/** emb_map.c: local rows [r0, r1) of shard si mapped read-only where the file stores them as
 *  plain float32 (their pages are read when first touched), else m->data NULL; no NaN / Inf
 *  check. */
mieb_status mieb_emb_shard_map_rows(struct mieb_emb_role *r, int si, int64_t r0, int64_t r1,
                                    struct mieb_emb_map *m);

/** emb_order.c: check a MIEB_EMB_EVERY_ROW role's /row_index (a permutation of 0..n-1) and,
 *  when it is not the identity, set file_item, info.reordered and offsets in the split's order. */
mieb_status mieb_emb_order_load(struct mieb_emb_role *r);
/** emb_order.c: items [start, start+count) of a reordered role into dst, in the split's order
 *  (rows at mieb_emb_role_block_offsets' offsets), checked for NaN / Inf. */
mieb_status mieb_emb_order_gather(struct mieb_emb_role *r, int64_t start, int64_t count, float *dst);

/** Index of the shard holding file item `item` (0 <= item < n_items; shard order). */
int mieb_emb_shard_of(const struct mieb_emb_role *r, int64_t item);
/** MIEB_ERR_BAD_DATA naming the first NaN or Inf, or the first row whose squared norm
 *  exceeds 2^124 (dot products with it overflow float32), of nrows rows read from shard si's
 *  local row row0 on; MIEB_OK when all are finite and bounded. */
mieb_status mieb_emb_check_finite(const struct mieb_emb_role *r, int si, int64_t row0, const float *rows,
                                  int64_t nrows);
/** dst_offsets[0..count] = the block's row offsets relative to its first row (0..count for
 *  single vectors); nothing when dst_offsets is NULL. */
void mieb_emb_role_block_offsets(const struct mieb_emb_role *r, int64_t start, int64_t count, int64_t *dst_offsets);

#endif
