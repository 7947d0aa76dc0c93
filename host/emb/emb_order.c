/*
 * emb_order.c - a role that holds every row of its split, stored in another order.
 *
 * Such a role's /row_index (concatenated over the shards in shard order) names the split row
 * of each stored item. The scorers index items by split row (query i is query_ids[i], pair i
 * is gold[i]), so the reader, not each family, puts the items back in the split's order: at
 * open the index is checked to be a permutation of 0..n-1 and inverted (file_item[i] = the
 * stored item of split row i); the identity changes nothing, so plain reads, zero-copy
 * blocks and the streamer keep their fast paths. Otherwise a read of split items
 * [start, start+count) sorts the stored items they name and goes through them shard by
 * shard, copying each item, with its token rows when multi-vector, to its place: from the
 * shard's mapping where it stores plain float32 (emb_map.c; only the pages of the rows used
 * are touched), else from runs of nearby rows read into a bounded scratch buffer (small gaps
 * are read through, as one HDF5 read costs about as much as 32 KiB of rows). So any block
 * size (--mem-limit) and any shard layout give the rows an unpermuted file gives.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/stop.h"
#include "emb_internal.h"

#define GATHER_GAP_BYTES ((int64_t)32 << 10)   /* a gap this small is read through */
#define GATHER_WINDOW_BYTES ((int64_t)8 << 20) /* rows read at a time (at least one item) */

/* The file and its local /row_index position holding global stored item j, for messages. */
static const char *where(const struct mieb_emb_role *r, int64_t j, int64_t *local)
{
    const struct emb_shard *s = &r->sh[mieb_emb_shard_of(r, j)];
    *local = j - s->item_start;
    return s->path;
}

static mieb_status not_a_permutation(const struct mieb_emb_role *r, int64_t j, int64_t v, int64_t first)
{
    int64_t n = r->info.n_items, pos, pos0;
    const char *file = where(r, j, &pos);
    char why[1200];
    if (first >= 0) {
        const char *file0 = where(r, first, &pos0);
        snprintf(why, sizeof why, "repeats /row_index[%lld]%s%s", (long long)pos0, file0 == file ? "" : " of ",
                 file0 == file ? "" : file0);
    } else {
        snprintf(why, sizeof why, "is outside 0..%lld", (long long)(n - 1));
    }
    return mieb_fail(MIEB_ERR_BAD_DATA,
                     "%s: /row_index[%lld] = %lld %s: role '%s' must hold every row of the split exactly once "
                     "(%lld items), so its /row_index must be a permutation of 0..%lld",
                     file, (long long)pos, (long long)v, why, r->role, (long long)n, (long long)(n - 1));
}

/* offsets in the split's order, from the stored items' row counts. */
static mieb_status reorder_offsets(struct mieb_emb_role *r)
{
    int64_t n = r->info.n_items, *by_split = malloc((size_t)(n + 1) * sizeof *by_split);
    if (!by_split)
        return mieb_fail(MIEB_ERR_OOM, "%s: out of memory for offsets", mieb_emb_role_path(r));
    by_split[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t f = r->file_item[i];
        by_split[i + 1] = by_split[i] + (r->offsets[f + 1] - r->offsets[f]);
    }
    free(r->offsets);
    r->offsets = by_split;
    return MIEB_OK;
}

mieb_status mieb_emb_order_load(struct mieb_emb_role *r)
{
    int64_t n = r->info.n_items, *ri = NULL, *inv = NULL;
    bool identity = true;
    if (!r->info.has_row_index)
        return MIEB_OK;
    MIEB_TRY(mieb_emb_role_row_index(r, &ri)); /* negative entries are refused there */
    if (!(inv = malloc((size_t)(n ? n : 1) * sizeof *inv))) {
        free(ri);
        return mieb_fail(MIEB_ERR_OOM, "%s: /row_index: out of memory", mieb_emb_role_path(r));
    }
    for (int64_t i = 0; i < n; i++)
        inv[i] = -1;
    mieb_status st = MIEB_OK;
    for (int64_t j = 0; j < n && st == MIEB_OK; j++) {
        int64_t v = ri[j];
        if (v >= n || inv[v] >= 0)
            st = not_a_permutation(r, j, v, v < n ? inv[v] : -1);
        else
            inv[v] = j, identity &= v == j;
    }
    free(ri);
    if (st != MIEB_OK || identity) {
        free(inv);
        return st;
    }
    r->file_item = inv;
    r->info.reordered = true;
    return r->info.multivector ? reorder_offsets(r) : MIEB_OK;
}

struct gather_item {
    int64_t file_item; /* global stored item (shard order) */
    int64_t dst_row;   /* its first row in dst */
};

static int cmp_file_item(const void *a, const void *b)
{
    int64_t x = ((const struct gather_item *)a)->file_item, y = ((const struct gather_item *)b)->file_item;
    return (x > y) - (x < y);
}

/* Local rows [*lo, *hi) of items it[k..*end) of one shard: as many sorted items as lie within
   small gaps of each other and fit the window (at least one). */
static void next_run(const struct mieb_emb_role *r, const struct gather_item *it, int64_t k, int64_t count,
                     int *si, int64_t *end, int64_t *lo, int64_t *hi)
{
    const int64_t row_bytes = r->info.dim * (int64_t)sizeof(float);
    const int64_t gap = GATHER_GAP_BYTES / row_bytes, window = GATHER_WINDOW_BYTES / row_bytes;
    *si = mieb_emb_shard_of(r, it[k].file_item);
    const struct emb_shard *s = &r->sh[*si];
    int64_t a = it[k].file_item - s->item_start;
    *lo = mieb_emb_shard_row(s, a);
    *hi = mieb_emb_shard_row(s, a + 1);
    for (*end = k + 1; *end < count; ++*end) {
        int64_t b = it[*end].file_item - s->item_start;
        if (b >= s->n_items)
            break;
        int64_t r0 = mieb_emb_shard_row(s, b), r1 = mieb_emb_shard_row(s, b + 1);
        if (r0 - *hi > gap || r1 - *lo > window)
            break;
        *hi = r1;
    }
}

/* Copies each item of one run to its place in dst, from the shard's mapping (`mapped`: its
   rows from 0) or else from the run read into scratch. */
static mieb_status scatter_run(struct mieb_emb_role *r, const struct gather_item *it, int64_t k, int64_t end,
                               int si, int64_t lo, int64_t hi, const float *mapped, float *scratch, float *dst)
{
    const struct emb_shard *s = &r->sh[si];
    const size_t dim = (size_t)r->info.dim;
    if (!mapped) {
        mieb_h5_lock();
        mieb_status st = mieb_emb_read_shard_rows(r, si, lo, hi - lo, scratch);
        mieb_h5_unlock();
        MIEB_TRY(st);
    }
    for (int64_t i = k; i < end; i++) {
        int64_t a = it[i].file_item - s->item_start;
        int64_t r0 = mieb_emb_shard_row(s, a), r1 = mieb_emb_shard_row(s, a + 1);
        const float *from = mapped ? mapped + (size_t)r0 * dim : scratch + (size_t)(r0 - lo) * dim;
        float *to = dst + (size_t)it[i].dst_row * dim;
        memcpy(to, from, (size_t)(r1 - r0) * dim * sizeof *to);
        MIEB_TRY(mieb_emb_check_finite(r, si, r0, to, r1 - r0)); /* only the rows handed out */
    }
    return MIEB_OK;
}

/* Shard si mapped whole into *m unless it already is (m->data NULL where it cannot be). */
static mieb_status map_shard(struct mieb_emb_role *r, int si, int *mapped_si, struct mieb_emb_map *m)
{
    if (*mapped_si == si)
        return MIEB_OK;
    mieb_emb_map_release(m);
    *mapped_si = si;
    return mieb_emb_shard_map_rows(r, si, 0, r->sh[si].n_rows, m);
}

/* A buffer for the largest run: the window, or one item larger than it. */
static float *alloc_scratch(const struct mieb_emb_role *r, const struct gather_item *it, int64_t count)
{
    int64_t rows = GATHER_WINDOW_BYTES / (r->info.dim * (int64_t)sizeof(float)) + 1;
    for (int64_t i = 0; r->info.multivector && i < count; i++) {
        const struct emb_shard *s = &r->sh[mieb_emb_shard_of(r, it[i].file_item)];
        int64_t a = it[i].file_item - s->item_start;
        int64_t n = mieb_emb_shard_row(s, a + 1) - mieb_emb_shard_row(s, a);
        rows = n > rows ? n : rows;
    }
    return malloc((size_t)rows * (size_t)r->info.dim * sizeof(float));
}

mieb_status mieb_emb_order_gather(struct mieb_emb_role *r, int64_t start, int64_t count, float *dst)
{
    struct gather_item *it = malloc((size_t)(count ? count : 1) * sizeof *it);
    float *scratch = NULL;
    mieb_status st = MIEB_OK;
    if (!it)
        return mieb_fail(MIEB_ERR_OOM, "%s: out of memory gathering %lld items", mieb_emb_role_path(r),
                         (long long)count);
    for (int64_t i = 0; i < count; i++) {
        it[i].file_item = r->file_item[start + i];
        it[i].dst_row = r->info.multivector ? r->offsets[start + i] - r->offsets[start] : i;
    }
    qsort(it, (size_t)count, sizeof *it, cmp_file_item); /* each shard read forwards, each chunk once */
    struct mieb_emb_map m = {0};
    int mapped_si = -1;
    for (int64_t k = 0, end; k < count && st == MIEB_OK; k = end) {
        int si;
        int64_t lo, hi;
        next_run(r, it, k, count, &si, &end, &lo, &hi);
        if ((st = mieb_stop_check()) != MIEB_OK) /* a stop signal: once per run (core/stop.h) */
            break;
        if ((st = map_shard(r, si, &mapped_si, &m)) != MIEB_OK)
            break;
        if (!m.data && !scratch && !(scratch = alloc_scratch(r, it, count))) { /* a run to read */
            st = mieb_fail(MIEB_ERR_OOM, "%s: out of memory gathering %lld items", mieb_emb_role_path(r),
                           (long long)count);
            break;
        }
        st = scatter_run(r, it, k, end, si, lo, hi, m.data, scratch, dst);
    }
    mieb_emb_map_release(&m);
    free(scratch);
    free(it);
    return st;
}
