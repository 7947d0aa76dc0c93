/*
 * emb_rows.c - what the readers of an embedding role share: where an item lies (its shard,
 * its rows), the rows of one shard read as float32 by hyperslab in bounded pieces (never
 * the whole role) and checked finite, the block's offsets, the role's /row_index.
 *
 * Opening and closing a role live in emb_open.c, reading a block in emb_read.c, the
 * streamer in emb_stream.c. All HDF5 work is done under the global HDF5 lock (h5_base.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/stop.h"
#include "emb_internal.h"
#include "../hdf5/h5_read.h"
#include "../core/half.h"

const struct mieb_emb_info *mieb_emb_role_info(const struct mieb_emb_role *r) { return &r->info; }
const char *mieb_emb_role_path(const struct mieb_emb_role *r) { return r->n_shards ? r->sh[0].path : ""; }

/* Index of the shard holding item `item` (shards are sorted by item_start and cover 0..n). */
int mieb_emb_shard_of(const struct mieb_emb_role *r, int64_t item)
{
    int lo = 0, hi = r->n_shards - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (r->sh[mid].item_start <= item)
            lo = mid;
        else
            hi = mid - 1;
    }
    /* skip empty shards that share the start with the one holding the item */
    while (lo < r->n_shards - 1 && r->sh[lo].n_items == 0)
        lo++;
    return lo;
}

const char *mieb_emb_role_file_of(const struct mieb_emb_role *r, int64_t item)
{
    if (item < 0 || item >= r->info.n_items)
        return NULL;
    return r->sh[mieb_emb_shard_of(r, r->file_item ? r->file_item[item] : item)].path;
}

mieb_status mieb_emb_role_rows_of(struct mieb_emb_role *r, int64_t start, int64_t count, int64_t *rows)
{
    if (start < 0 || count < 0 || start + count > r->info.n_items)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "%s: items [%lld, %lld) are outside the role's %lld items",
                         mieb_emb_role_path(r), (long long)start, (long long)(start + count),
                         (long long)r->info.n_items);
    *rows = r->info.multivector ? r->offsets[start + count] - r->offsets[start] : count;
    return MIEB_OK;
}

/* Item (0-based within the shard) owning local row `row`, for messages. */
static int64_t item_of_row(const struct emb_shard *s, int64_t row)
{
    if (!s->local_off)
        return row;
    int64_t lo = 0, hi = s->n_items - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (s->local_off[mid] <= row)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/*
 * Bound on a row's squared norm, 2^124 (norm below 2^62, about 4.6e18). Every score is a
 * float32 sum of products x_i * y_i in some order; each partial sum is at most
 * sum |x_i y_i| * (1 + 2^-24)^d <= |x| |y| * (1 + 2^-24)^d (Cauchy-Schwarz; each term passes
 * at most d roundings), and (1 + 2^-24)^d < 2 for d below 11 million. Distances
 * (k-means, STS) reach |x - y|^2 <= (|x| + |y|)^2 <= 4 * 2^124 = 2^126. So every dot product,
 * squared norm and squared distance, and all their partial sums, stay below 2^127, and
 * float32 holds up to 2^128: finite values above the bound would give Inf or NaN scores.
 */
#define EMB_MAX_NORM2 0x1p124

/* Does row x hold a NaN or Inf (*col its column) or a squared norm above the bound (*col = -1,
   *norm2 the norm)? The norm is summed in double, which holds it for any finite float32 row. */
static bool row_bad(const float *x, int64_t dim, int64_t *col, double *norm2)
{
    double s = 0;
    for (int64_t k = 0; k < dim; k++) {
        if ((mieb_float_to_bits(x[k]) & 0x7f800000u) == 0x7f800000u) {
            *col = k;
            return true;
        }
        s += (double)x[k] * (double)x[k];
    }
    *col = -1;
    *norm2 = s;
    return s > EMB_MAX_NORM2;
}

/*
 * The first of nrows rows of dim floats that row_bad refuses, else -1. A branch-free pass
 * over blocks of values (the compiler vectorises it; as cheap as a NaN / Inf scan) looks for
 * any |value| above t = sqrt(bound / dim): a row without one has a squared norm of at most
 * dim * t^2 <= the bound. Only the rows of a block holding one are looked at (NaN and Inf
 * compare above t too).
 */
static int64_t first_bad_row(const float *rows, int64_t nrows, int64_t dim, int64_t *col, double *norm2)
{
    float t = (float)sqrt(EMB_MAX_NORM2 / (double)dim);
    while ((double)t * (double)t * (double)dim > EMB_MAX_NORM2) /* float rounding went up */
        t = nextafterf(t, 0.0f);
    const int32_t tb = (int32_t)mieb_float_to_bits(t); /* |value| bits order like the values */
    const size_t n = (size_t)nrows * (size_t)dim;
    for (size_t i0 = 0; i0 < n; i0 += 4096) {
        size_t m = n - i0 < 4096 ? n - i0 : 4096;
        uint32_t any = 0;
        for (size_t k = 0; k < m; k++)
            any |= (int32_t)(mieb_float_to_bits(rows[i0 + k]) & 0x7fffffffu) > tb;
        if (!any)
            continue;
        for (int64_t r = (int64_t)(i0 / (size_t)dim); r <= (int64_t)((i0 + m - 1) / (size_t)dim); r++)
            if (row_bad(rows + (size_t)r * (size_t)dim, dim, col, norm2))
                return r;
    }
    return -1;
}

/* The split item a reordered role stores as item `stored` (a scan: messages only). */
static int64_t split_item_of(const struct mieb_emb_role *r, int64_t stored)
{
    for (int64_t i = 0; r->file_item && i < r->info.n_items; i++)
        if (r->file_item[i] == stored)
            return i;
    return stored;
}

mieb_status mieb_emb_check_finite(const struct mieb_emb_role *r, int si, int64_t row0, const float *dst,
                                  int64_t nrows)
{
    const struct emb_shard *s = &r->sh[si];
    int64_t col = -1;
    double norm2 = 0;
    int64_t bad = first_bad_row(dst, nrows, r->info.dim, &col, &norm2);
    if (bad < 0)
        return MIEB_OK;
    int64_t row = row0 + bad, item = split_item_of(r, s->item_start + item_of_row(s, row));
    const char *by = r->file_item ? ", by /row_index" : "";
    if (col < 0)
        return mieb_fail(MIEB_ERR_BAD_DATA,
                         "%s: /embeddings row %lld (item %lld of the role%s) has squared norm %.3g, above 2^124 "
                         "(%.3g): dot products with it overflow float32",
                         s->path, (long long)row, (long long)item, by, norm2, EMB_MAX_NORM2);
    uint32_t bits = mieb_float_to_bits(dst[(size_t)bad * (size_t)r->info.dim + (size_t)col]);
    return mieb_fail(MIEB_ERR_BAD_DATA, "%s: /embeddings row %lld (item %lld of the role%s), column %lld holds %s",
                     s->path, (long long)row, (long long)item, by, (long long)col,
                     (bits & 0x007fffffu) ? "NaN" : "Inf");
}

/*
 * One piece of a read (read_shard_rows). The 16-bit encodings are read into the upper half
 * of dst and widened in place: element i is read before float i overwrites it (float i
 * covers 16-bit slots <= i), so no scratch buffer is needed.
 */
static mieb_status read_piece(struct mieb_emb_role *r, int si, int64_t row0, int64_t nrows, float *dst)
{
    struct emb_shard *s = &r->sh[si];
    const int64_t dim = r->info.dim;
    mieb_status st;
    hsize_t off[2] = {(hsize_t)row0, 0}, cnt[2] = {(hsize_t)nrows, (hsize_t)dim};
    hid_t fsp = H5Dget_space(r->cur_dset);
    hid_t msp = H5Screate_simple(2, cnt, NULL);
    herr_t rc = -1;
    size_t n = (size_t)nrows * (size_t)dim;
    uint16_t *half = (uint16_t *)(void *)dst + n; /* upper half of dst */
    if (fsp >= 0 && msp >= 0 && H5Sselect_hyperslab(fsp, H5S_SELECT_SET, off, NULL, cnt, NULL) >= 0)
        rc = H5Dread(r->cur_dset, r->cur_memtype, msp, fsp, H5P_DEFAULT,
                     s->dtype == MIEB_EMB_F32 ? (void *)dst : (void *)half);
    /* the reason first: any later HDF5 call (H5Sclose) clears the error stack */
    st = rc < 0 ? mieb_h5_fail(MIEB_ERR_HDF5, "%s: /embeddings: read of rows %lld..%lld failed", s->path,
                               (long long)row0, (long long)(row0 + nrows))
                : MIEB_OK;
    if (msp >= 0)
        H5Sclose(msp);
    if (fsp >= 0)
        H5Sclose(fsp);
    if (st != MIEB_OK)
        return st;
    if (s->dtype != MIEB_EMB_F32) {
        /* Copy each block of 16-bit values out before the floats overwrite them (memcpy
         * keeps the compiler from reordering across the two views of one buffer). */
        uint16_t tmp[1024];
        const bool f16 = s->dtype == MIEB_EMB_F16;
        for (size_t i0 = 0; i0 < n; i0 += 1024) {
            size_t m = n - i0 < 1024 ? n - i0 : 1024;
            memcpy(tmp, (const char *)(const void *)half + i0 * 2, m * 2);
            for (size_t k = 0; k < m; k++)
                dst[i0 + k] = f16 ? mieb_half_to_float(tmp[k]) : mieb_bf16_to_float(tmp[k]);
        }
    }
    return MIEB_OK;
}

/*
 * A read asks HDF5 for about READ_PIECE_BYTES of the file's rows at a time (at least one
 * row; a whole number of chunks of a chunked dataset, so that no chunk is decompressed
 * twice), each piece from a row that is a multiple of the piece's rows; between pieces it
 * looks at the stop flag (core/stop.h), so a stop signal ends a read of a large block, from
 * a slow disk or a network file system, within one piece. The rows, and so the values, are
 * the same as one read's.
 */
#define READ_PIECE_BYTES ((int64_t)4 << 20)

/* Rows per piece of the open shard's /embeddings (HDF5 lock held, shard acquired). */
static int64_t piece_rows(const struct mieb_emb_role *r, int si)
{
    const int64_t bytes = r->info.dim * (r->sh[si].dtype == MIEB_EMB_F32 ? 4 : 2); /* a row in the file */
    int64_t piece = READ_PIECE_BYTES / bytes > 0 ? READ_PIECE_BYTES / bytes : 1;
    hsize_t chunk[2] = {0, 0};
    hid_t dcpl = H5Dget_create_plist(r->cur_dset);
    if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, 2, chunk) == 2 && chunk[0] > 0 &&
        chunk[0] < (hsize_t)INT64_MAX)
        piece = (piece + (int64_t)chunk[0] - 1) / (int64_t)chunk[0] * (int64_t)chunk[0];
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return piece;
}

mieb_status mieb_emb_read_shard_rows(struct mieb_emb_role *r, int si, int64_t row0, int64_t nrows, float *dst)
{
    const int64_t dim = r->info.dim;
    if (nrows == 0)
        return MIEB_OK;
    if (r->mem)
        return mieb_emb_memory_rows(r, row0, nrows, dst);
    MIEB_TRY(mieb_emb_shard_acquire(r, si));
    const int64_t piece = piece_rows(r, si);
    for (int64_t a = row0, end = row0 + nrows; a < end;) {
        int64_t b = (a / piece + 1) * piece < end ? (a / piece + 1) * piece : end;
        MIEB_TRY(mieb_stop_check());
        MIEB_TRY(read_piece(r, si, a, b - a, dst + (size_t)(a - row0) * (size_t)dim));
        a = b;
    }
    return MIEB_OK;
}

void mieb_emb_role_block_offsets(const struct mieb_emb_role *r, int64_t start, int64_t count, int64_t *dst_offsets)
{
    if (dst_offsets)
        for (int64_t i = 0; i <= count; i++)
            dst_offsets[i] = r->info.multivector ? r->offsets[start + i] - r->offsets[start] : i;
}

mieb_status mieb_emb_role_row_index(struct mieb_emb_role *r, int64_t **out)
{
    *out = NULL;
    if (!r->info.has_row_index)
        return MIEB_OK;
    int64_t n = r->info.n_items, *all = malloc((size_t)(n ? n : 1) * sizeof *all);
    if (!all)
        return mieb_fail(MIEB_ERR_OOM, "%s: /row_index: out of memory", mieb_emb_role_path(r));
    if (r->mem_row_index) {
        memcpy(all, r->mem_row_index, sizeof *all * (size_t)n);
        *out = all;
        return MIEB_OK;
    }
    mieb_status st = MIEB_OK;
    mieb_h5_lock();
    for (int i = 0; i < r->n_shards && st == MIEB_OK; i++) {
        struct emb_shard *s = &r->sh[i];
        int64_t *part = NULL, d[2];
        if ((st = mieb_emb_shard_acquire(r, i)) != MIEB_OK)
            break;
        st = mieb_h5_read_i64(r->cur_file, s->path, "/row_index", 1, 1, s->file_size, &part, d);
        if (st == MIEB_OK && d[0] != s->n_items)
            st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: /row_index has %lld entries, expected %lld", s->path,
                           (long long)d[0], (long long)s->n_items);
        for (int64_t k = 0; st == MIEB_OK && k < s->n_items; k++) {
            if (part[k] < 0)
                st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: /row_index[%lld] = %lld is negative", s->path, (long long)k,
                               (long long)part[k]);
            all[s->item_start + k] = part[k];
        }
        free(part);
    }
    mieb_h5_unlock();
    if (st != MIEB_OK) {
        free(all);
        return st;
    }
    *out = all;
    return MIEB_OK;
}
