/*
 * emb_map.c - zero-copy blocks: a role's rows mapped straight from the file, where the file
 * stores them as the plain float32 array.
 *
 * Why: a block read with H5Dread is a copy from the page cache into the stream's buffer,
 * whose every new page the kernel zeroes first, on the reader thread beside the compute
 * threads. For a 150 MB block (50,000 x 768) that measured 0.07 s with recycled memory and
 * 0.4 s on a fresh VM, against 0.016 s to map it and check it for NaN / Inf
 * (docs/DESIGN.md, mapped corpus blocks). HDF5's contiguous layout is the raw array at one
 * offset of the file (H5Dget_offset), so a block is one byte range of it.
 *
 * A block is mapped only when it lies in one shard whose /embeddings is contiguous (no
 * filters, no external storage, storage allocated), stored as IEEE float32 little-endian on a
 * little-endian host, at an offset that is a multiple of 4, inside the file as it is now; and
 * the mapping's first and last rows equal what H5Dread returns for them, so an offset that
 * meant something else (a user block, a driver we do not know) falls back instead of giving
 * other rows. Otherwise m->data stays NULL and the caller reads the block (same rows, same
 * errors). The mapping is read-only: its reader must not write into the block.
 *
 * A file truncated by another process while it is mapped makes reads of the lost pages
 * raise SIGBUS; the inputs must not change during a run (MIEB_STREAM_MMAP=off reads by copy).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/stop.h"
#include "emb_internal.h"
#include "../core/env.h"

static bool host_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* The file offset of the open shard's /embeddings array when it is stored plainly, else -1
   (HDF5 lock held, shard acquired). */
static int64_t plain_f32_offset(const struct mieb_emb_role *r)
{
    int64_t off = -1;
    hid_t dcpl = H5Dget_create_plist(r->cur_dset), ft = H5Dget_type(r->cur_dset);
    if (dcpl >= 0 && ft >= 0 && H5Pget_layout(dcpl) == H5D_CONTIGUOUS && H5Pget_nfilters(dcpl) == 0 &&
        H5Pget_external_count(dcpl) == 0 && H5Tequal(ft, H5T_IEEE_F32LE) > 0) {
        haddr_t a = H5Dget_offset(r->cur_dset);
        if (a != HADDR_UNDEF && a % 4 == 0 && a < (haddr_t)INT64_MAX)
            off = (int64_t)a;
    }
    if (ft >= 0)
        H5Tclose(ft);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return off;
}

/* Local row `row` of the open shard as float32 through HDF5 (HDF5 lock held). */
static bool hdf5_row(const struct mieb_emb_role *r, int64_t row, float *out)
{
    hsize_t off[2] = {(hsize_t)row, 0}, cnt[2] = {1, (hsize_t)r->info.dim};
    hid_t fsp = H5Dget_space(r->cur_dset), msp = H5Screate_simple(2, cnt, NULL);
    bool ok = fsp >= 0 && msp >= 0 && H5Sselect_hyperslab(fsp, H5S_SELECT_SET, off, NULL, cnt, NULL) >= 0 &&
              H5Dread(r->cur_dset, H5T_NATIVE_FLOAT, msp, fsp, H5P_DEFAULT, out) >= 0;
    if (msp >= 0)
        H5Sclose(msp);
    if (fsp >= 0)
        H5Sclose(fsp);
    return ok;
}

bool mieb_emb_map_enabled(void)
{
    const char *e = mieb_env(MIEB_ENV_STREAM_MMAP);
    return !(e && (!strcmp(e, "off") || !strcmp(e, "0")));
}

void mieb_emb_map_release(struct mieb_emb_map *m)
{
    if (m && m->base)
        munmap(m->base, m->len);
    if (m)
        memset(m, 0, sizeof *m);
}

/* Rows of a mapping populated and checked for NaN / Inf at a time: the pages are read here,
   on the reader thread, in pieces with a look at the stop flag between them (core/stop.h), so
   a stop signal does not wait for a whole block to come from a slow disk. */
#define MAP_PIECE_BYTES ((int64_t)8 << 20)

static mieb_status populate_checked(const struct mieb_emb_role *r, int si, int64_t r0, const struct mieb_emb_map *m)
{
    const int64_t dim = r->info.dim;
    int64_t piece = MAP_PIECE_BYTES / (dim * (int64_t)sizeof(float));
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t pg = page > 0 ? (uintptr_t)page : 4096;
    piece = piece > 0 ? piece : 1;
    for (int64_t a = 0; a < m->rows; a += piece) {
        int64_t n = m->rows - a < piece ? m->rows - a : piece;
        const float *rows = m->data + (size_t)a * (size_t)dim;
        MIEB_TRY(mieb_stop_check());
#ifdef MADV_POPULATE_READ
        /* the pages in one call, as MAP_POPULATE would; where the kernel cannot, the check's
           reads fault them in */
        uintptr_t lo = (uintptr_t)rows / pg * pg, hi = (uintptr_t)(rows + (size_t)n * (size_t)dim);
        (void)madvise((void *)lo, hi - lo, MADV_POPULATE_READ);
#endif
        MIEB_TRY(mieb_emb_check_finite(r, si, r0 + a, rows, n));
    }
    return MIEB_OK;
}

mieb_status mieb_emb_role_map(struct mieb_emb_role *r, int64_t start, int64_t count, struct mieb_emb_map *m)
{
    memset(m, 0, sizeof *m);
    if (count <= 0 || start < 0 || start + count > r->info.n_items || r->info.reordered)
        return MIEB_OK; /* a reordered role's items are gathered by the read */
    int si = mieb_emb_shard_of(r, start);
    const struct emb_shard *s = &r->sh[si];
    if (start + count > s->item_start + s->n_items)
        return MIEB_OK; /* a block over two shards: read it */
    int64_t a = start - s->item_start, b = a + count;
    int64_t r0 = mieb_emb_shard_row(s, a), r1 = mieb_emb_shard_row(s, b);
    mieb_status st = mieb_emb_shard_map_rows(r, si, r0, r1, m);
    if (st == MIEB_OK && m->data && (st = populate_checked(r, si, r0, m)) != MIEB_OK)
        mieb_emb_map_release(m);
    return st;
}

mieb_status mieb_emb_shard_map_rows(struct mieb_emb_role *r, int si, int64_t r0, int64_t r1,
                                    struct mieb_emb_map *m)
{
    const struct emb_shard *s = &r->sh[si];
    size_t row_bytes = (size_t)r->info.dim * sizeof(float);
    memset(m, 0, sizeof *m);
    if (r->mem) {
        mieb_emb_memory_map(r, r0, r1, m);
        return MIEB_OK;
    }
    if (r1 <= r0 || s->dtype != MIEB_EMB_F32 || !host_little_endian() || !mieb_emb_map_enabled())
        return MIEB_OK; /* nothing, or a conversion: read it */

    int hfd = -1, fd = -1;
    mieb_h5_lock();
    mieb_status st = mieb_emb_shard_acquire(r, si); /* an error here is the read's error too */
    int64_t off = st == MIEB_OK ? plain_f32_offset(r) : -1;
    /* HDF5's own descriptor, duplicated while the file is surely open: the file HDF5 reads,
       never the path again (a FIFO renamed over it would block the open) */
    if (off >= 0 && mieb_h5_file_fd(r->cur_file, &hfd) == MIEB_OK)
        fd = fcntl(hfd, F_DUPFD_CLOEXEC, 0);
    mieb_h5_unlock();
    if (st != MIEB_OK || off < 0)
        return st;

    int64_t lo = off + r0 * (int64_t)row_bytes, hi = off + r1 * (int64_t)row_bytes;
    long page = sysconf(_SC_PAGESIZE);
    int64_t map_lo = lo / (page > 0 ? page : 4096) * (page > 0 ? page : 4096);
    struct stat sb;
    if (fd < 0)
        return MIEB_OK; /* the read reports it */
    void *base = MAP_FAILED;
    if (fstat(fd, &sb) == 0 && hi <= (int64_t)sb.st_size)
        base = mmap(NULL, (size_t)(hi - map_lo), PROT_READ, MAP_SHARED, fd, (off_t)map_lo);
    close(fd);
    if (base == MAP_FAILED)
        return MIEB_OK;
    const float *data = (const float *)(const void *)((const char *)base + (lo - map_lo));

    float *probe = malloc(2 * row_bytes);
    bool same = false;
    if (probe) {
        mieb_h5_lock();
        same = mieb_emb_shard_acquire(r, si) == MIEB_OK && hdf5_row(r, r0, probe) &&
               hdf5_row(r, r1 - 1, probe + r->info.dim) && !memcmp(probe, data, row_bytes) &&
               !memcmp(probe + r->info.dim, data + (size_t)(r1 - 1 - r0) * (size_t)r->info.dim, row_bytes);
        mieb_h5_unlock();
        free(probe);
    }
    if (!same) {
        MIEB_LOGD("%s: /embeddings rows %lld..%lld: the file's bytes at HDF5's offset are not its rows; reading them "
                  "instead of mapping", s->path, (long long)r0, (long long)r1);
        munmap(base, (size_t)(hi - map_lo));
        return MIEB_OK;
    }
    m->base = base;
    m->len = (size_t)(hi - map_lo);
    m->data = data;
    m->rows = r1 - r0;
    return MIEB_OK;
}
