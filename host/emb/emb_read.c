/* emb_read.c - a block of a role's items read in item order (embeddings.h): through the
   shard files in order, or gathered through the role's row order (emb_order.c). */
#include "emb_internal.h"

/* Local rows [row0, row0+nrows) of shard si into dst as float32, non-finite values rejected. */
static mieb_status read_rows(struct mieb_emb_role *r, int si, int64_t row0, int64_t nrows, float *dst)
{
    MIEB_TRY(mieb_emb_read_shard_rows(r, si, row0, nrows, dst));
    return mieb_emb_check_finite(r, si, row0, dst, nrows);
}

mieb_status mieb_emb_role_read(struct mieb_emb_role *r, int64_t start, int64_t count, float *dst,
                               int64_t *dst_offsets)
{
    int64_t rows;
    mieb_status st = MIEB_OK;
    MIEB_TRY(mieb_emb_role_rows_of(r, start, count, &rows));
    if (r->info.multivector && !dst_offsets)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "%s: multi-vector role read without an offsets buffer",
                         mieb_emb_role_path(r));
    mieb_emb_role_block_offsets(r, start, count, dst_offsets);
    if (r->file_item)
        return mieb_emb_order_gather(r, start, count, dst);
    mieb_h5_lock();
    int64_t item = start, end = start + count, done_rows = 0;
    while (item < end && st == MIEB_OK) {
        int si = mieb_emb_shard_of(r, item);
        struct emb_shard *s = &r->sh[si];
        int64_t a = item - s->item_start; /* local items [a, b) */
        int64_t b = (end < s->item_start + s->n_items ? end : s->item_start + s->n_items) - s->item_start;
        int64_t r0 = mieb_emb_shard_row(s, a), r1 = mieb_emb_shard_row(s, b);
        st = read_rows(r, si, r0, r1 - r0, dst + (size_t)done_rows * (size_t)r->info.dim);
        done_rows += r1 - r0;
        item = s->item_start + b;
    }
    mieb_h5_unlock();
    return st;
}
