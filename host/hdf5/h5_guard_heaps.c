/*
 * h5_guard_heaps.c - global heaps: read contiguous variable-length string datasets and raw
 * string attributes without HDF5's vlen conversion, by parsing the heap IDs and global heap
 * collections (HDF5 file format spec, "Global Heap" and "Variable-length" datatype storage)
 * with bounds checks; and, before HDF5 opens a file, refuse the collections it would parse.
 *
 * Why: on corrupted files libhdf5 1.10's H5HG_read loops forever or reads out of bounds
 * (found by fuzzing task-data files), and a reader must fail cleanly instead. Layouts we
 * do not parse (chunked, compact) return MIEB_ERR_UNSUPPORTED and the caller falls back
 * to H5Dread. Each element on disk: uint32 length, collection address (sizeof_addr
 * bytes), uint32 object index, all little-endian; addresses are relative to the base
 * address (the userblock size).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5_guard.h"

#define GCOL_MAX_BYTES (1ULL << 30)
#define RAW_BLOCK 4096 /* heap IDs per pread */

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* One parsed global heap collection: object index -> (offset in buf, size). */
struct gcol {
    uint64_t addr; /* relative address, UINT64_MAX when empty */
    uint8_t *buf;
    uint64_t *off, *len; /* [n_idx]; len == UINT64_MAX: no such object */
    uint32_t n_idx;
};

static bool read_at(int fd, void *buf, uint64_t n, uint64_t at)
{
    uint8_t *p = buf;
    while (n > 0) {
        ssize_t r = pread(fd, p, n > (1u << 30) ? (1u << 30) : (size_t)n, (off_t)at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = 0; /* end of file, not an error code */
            return false;
        }
        p += r, n -= (uint64_t)r, at += (uint64_t)r;
    }
    return true;
}

static mieb_status load_gcol(int fd, struct gcol *c, uint64_t addr, uint64_t base, int ss, int64_t file_size,
                             const char *fname, const char *dpath)
{
    uint8_t hdr[16];
    uint64_t abs = base + addr, fsz = (uint64_t)file_size;
    free(c->buf), free(c->off), free(c->len);
    memset(c, 0, sizeof *c);
    c->addr = UINT64_MAX;
    bool inside = abs >= base && abs <= fsz && fsz - abs >= (uint64_t)(8 + ss);
    if (inside && !read_at(fd, hdr, (uint64_t)(8 + ss), abs))
        return mieb_fail(MIEB_ERR_IO, "%s: %s: cannot read the global heap at %llu: %s", fname, dpath,
                         (unsigned long long)abs, errno ? strerror(errno) : "unexpected end of file");
    if (!inside || memcmp(hdr, "GCOL", 4) != 0 || hdr[4] != 1)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: string data points to a bad global heap at %llu (corrupt file)",
                         fname, dpath, (unsigned long long)abs);
    uint64_t size = le(hdr + 8, ss);
    if (size < (uint64_t)(8 + ss) || size > GCOL_MAX_BYTES || size > fsz - abs)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: global heap at %llu has impossible size %llu (corrupt file)",
                         fname, dpath, (unsigned long long)abs, (unsigned long long)size);
    if (!(c->buf = malloc(size)))
        return mieb_fail(MIEB_ERR_OOM, "%s: %s: out of memory for a global heap of %llu bytes", fname, dpath,
                         (unsigned long long)size);
    if (!read_at(fd, c->buf, size, abs))
        return mieb_fail(MIEB_ERR_IO, "%s: cannot read %llu bytes at %llu: %s", fname, (unsigned long long)size,
                         (unsigned long long)abs, errno ? strerror(errno) : "unexpected end of file");
    /* objects: uint16 index, uint16 refcount, 4 reserved, size (ss bytes), data padded to 8 */
    for (uint64_t p = 8 + (uint64_t)ss; p + 8 + (uint64_t)ss <= size;) {
        uint32_t idx = (uint32_t)le(c->buf + p, 2);
        uint64_t osz = le(c->buf + p + 8, ss), data = p + 8 + (uint64_t)ss;
        if (idx == 0) /* the free-space object ends the list */
            break;
        if (osz > size - data)
            return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: global heap object %u at %llu overruns its heap (corrupt file)",
                             fname, dpath, idx, (unsigned long long)abs);
        if (idx >= c->n_idx) {
            uint32_t n = idx + 64;
            uint64_t *o = realloc(c->off, n * sizeof *o), *l = o ? realloc(c->len, n * sizeof *l) : NULL;
            if (o)
                c->off = o;
            if (!o || !l)
                return mieb_fail(MIEB_ERR_OOM, "%s: %s: out of memory", fname, dpath);
            c->len = l;
            for (uint32_t k = c->n_idx; k < n; k++)
                c->len[k] = UINT64_MAX;
            c->n_idx = n;
        }
        c->off[idx] = data, c->len[idx] = osz;
        p = data + ((osz + 7) & ~(uint64_t)7);
    }
    c->addr = addr;
    return MIEB_OK;
}

mieb_status mieb_h5_vlen_strings_raw(hid_t file, hid_t ds, const char *fname, const char *dpath, int64_t file_size,
                                     int64_t n, mieb_h5_str_sink sink, void *user)
{
    mieb_status st = MIEB_ERR_UNSUPPORTED;
    int fd = -1;
    uint8_t *raw = NULL;
    struct gcol c = {.addr = UINT64_MAX};
    size_t sa = 0, ss = 0;
    hsize_t ub = 0;
    mieb_h5_lock();
    hid_t dcpl = H5Dget_create_plist(ds), fcpl = H5Fget_create_plist(file);
    bool ok = dcpl >= 0 && fcpl >= 0 && H5Pget_layout(dcpl) == H5D_CONTIGUOUS && H5Pget_external_count(dcpl) == 0 &&
              H5Pget_sizes(fcpl, &sa, &ss) >= 0 && H5Pget_userblock(fcpl, &ub) >= 0;
    haddr_t off = ok ? H5Dget_offset(ds) : HADDR_UNDEF;
    /* HDF5's own descriptor, borrowed: the file it opened, never the path again (h5_open.c) */
    ok = ok && mieb_h5_file_fd(file, &fd) == MIEB_OK;
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (fcpl >= 0)
        H5Pclose(fcpl);
    H5Eclear2(H5E_DEFAULT);
    mieb_h5_unlock();
    /* anything unusual (unallocated storage, odd address sizes): let HDF5 do it */
    if (!ok || off == HADDR_UNDEF || (sa != 4 && sa != 8) || (ss != 2 && ss != 4 && ss != 8))
        return MIEB_ERR_UNSUPPORTED;
    const uint64_t elem = 8 + sa, fsz = (uint64_t)file_size;
    if ((uint64_t)n > fsz / elem || off > fsz - (uint64_t)n * elem)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: %lld strings at %llu run past the end of the file (corrupt)",
                         fname, dpath, (long long)n, (unsigned long long)off);
    if (!(raw = malloc(RAW_BLOCK * elem))) {
        st = mieb_fail(MIEB_ERR_OOM, "%s: %s: out of memory", fname, dpath);
        goto done;
    }
    st = MIEB_OK;
    for (int64_t b0 = 0; b0 < n && st == MIEB_OK; b0 += RAW_BLOCK) {
        int64_t cnt = n - b0 < RAW_BLOCK ? n - b0 : RAW_BLOCK;
        if (!read_at(fd, raw, (uint64_t)cnt * elem, off + (uint64_t)b0 * elem)) {
            st = mieb_fail(MIEB_ERR_IO, "%s: %s: cannot read string references: %s", fname, dpath,
                           errno ? strerror(errno) : "unexpected end of file");
            break;
        }
        for (int64_t k = 0; k < cnt && st == MIEB_OK; k++) {
            const uint8_t *e = raw + k * elem;
            uint64_t len = le(e, 4), addr = le(e + 4, (int)sa), idx = le(e + 4 + sa, 4);
            if (len == 0) {
                st = sink(user, b0 + k, "", 0);
                continue;
            }
            if (addr != c.addr && (st = load_gcol(fd, &c, addr, ub, (int)ss, file_size, fname, dpath)) != MIEB_OK)
                break;
            if (idx >= c.n_idx || c.len[idx] == UINT64_MAX || len > c.len[idx]) {
                st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s[%lld]: string refers to a missing global heap object "
                               "(corrupt file)", fname, dpath, (long long)(b0 + k));
                break;
            }
            st = sink(user, b0 + k, (const char *)c.buf + c.off[idx], (size_t)len);
        }
    }
done:
    free(c.buf), free(c.off), free(c.len);
    free(raw);
    return st;
}

mieb_status mieb_h5_vlen_string_at(hid_t obj, const uint8_t *heap_id, const char *fname, const char *what,
                                   char **out)
{
    struct mieb_h5_layout lay;
    struct gcol c = {.addr = UINT64_MAX};
    MIEB_TRY(mieb_h5_layout_of(obj, fname, &lay));
    uint64_t len = le(heap_id, 4), addr = le(heap_id + 4, lay.sa), idx = le(heap_id + 4 + lay.sa, 4);
    if (len == 0 || addr == 0) /* HDF5's empty (NULL) string */
        return (*out = strdup("")) ? MIEB_OK : mieb_fail(MIEB_ERR_OOM, "%s: %s: out of memory", fname, what);
    int fd = lay.fd; /* HDF5's own descriptor: borrowed, not closed here */
    mieb_status st = load_gcol(fd, &c, addr, lay.base, lay.ss, lay.file_size, fname, what);
    if (st == MIEB_OK && (idx >= c.n_idx || c.len[idx] == UINT64_MAX || len > c.len[idx]))
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: string refers to a missing global heap object (corrupt file)",
                       fname, what);
    if (st == MIEB_OK) {
        char *s = malloc(len + 1);
        if (!s) {
            st = mieb_fail(MIEB_ERR_OOM, "%s: %s: out of memory", fname, what);
        } else {
            memcpy(s, c.buf + c.off[idx], len);
            s[len] = '\0';
            *out = s;
        }
    }
    free(c.buf), free(c.off), free(c.len);
    return st;
}

/* ---- pre-open guard for the collections HDF5 itself will parse (string attributes) ---- */

#define SCAN_WHOLE_MAX (16LL << 20) /* files up to this size are scanned entirely */
#define SCAN_WINDOW (1LL << 20)     /* else the first and last MiB (where attribute heaps live) */

/* sizeof_size from the superblock (at 0, 512, 1024, ...), 0 when none is found, -1 on a read error. */
static int superblock_sizeof_size(int fd, int64_t file_size)
{
    static const uint8_t sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    uint8_t b[16];
    for (int64_t at = 0; at + 16 <= file_size; at = at ? at * 2 : 512) {
        if (!read_at(fd, b, 16, (uint64_t)at))
            return -1; /* the guard must not be skipped because a read failed */
        if (memcmp(b, sig, 8) == 0)
            return b[8] <= 1 ? b[14] : b[10]; /* v0/v1 vs v2/v3 superblock layouts */
    }
    return 0;
}

/*
 * Walk one candidate collection exactly as H5HG__cache_heap_deserialize (1.10) does and
 * say whether that walk terminates inside the collection: an object whose size would send
 * the walk backwards, nowhere (size 0 free-space object: an endless loop) or past the end
 * (out-of-bounds reads later) makes the file corrupt.
 */
static bool gcol_walk_ok(const uint8_t *h, uint64_t size, int ss)
{
    const uint64_t objhdr = 8 + (uint64_t)ss;
    for (uint64_t p = objhdr; p < size;) {
        if (p + objhdr > size)
            break; /* a tail too small for a header is free space */
        uint32_t idx = (uint32_t)le(h + p, 2);
        uint64_t osz = le(h + p + 8, ss);
        if (osz > size)
            return false;
        uint64_t need = idx > 0 ? objhdr + ((osz + 7) & ~(uint64_t)7) : osz;
        if (need == 0 || need > size - p)
            return false;
        p += need;
    }
    return true;
}

static mieb_status scan_range(int fd, const char *path, int64_t from, int64_t to, int64_t file_size, int ss,
                              uint8_t *buf, uint8_t **gbuf, uint64_t *gcap)
{
    const int64_t step = SCAN_WINDOW;
    for (int64_t at = from; at < to; at += step) {
        int64_t n = to - at < step + 7 ? to - at : step + 7; /* overlap so no signature is split */
        if (!read_at(fd, buf, (uint64_t)n, (uint64_t)at))
            return mieb_fail(MIEB_ERR_IO, "%s: read error at byte %lld: %s", path, (long long)at,
                             errno ? strerror(errno) : "unexpected end of file");
        for (int64_t i = 0; i + 8 <= n && i < step; i++) {
            /* HDF5 checks only the signature and the version and skips the 3 reserved bytes,
               so a collection with junk there is parsed all the same */
            if (buf[i] != 'G' || memcmp(buf + i, "GCOL\x01", 5) != 0)
                continue;
            uint64_t pos = (uint64_t)(at + i), size = 0;
            uint8_t hdr[8];
            bool io_ok = true;
            if (pos + 8 + (uint64_t)ss <= (uint64_t)file_size && (io_ok = read_at(fd, hdr, (uint64_t)ss, pos + 8)))
                size = le(hdr, ss);
            bool ok = size >= 8 + (uint64_t)ss && size <= GCOL_MAX_BYTES && size <= (uint64_t)file_size - pos;
            if (ok && size > *gcap) {
                uint8_t *nb = realloc(*gbuf, size);
                if (!nb)
                    return mieb_fail(MIEB_ERR_OOM, "%s: out of memory checking a global heap", path);
                *gbuf = nb, *gcap = size;
            }
            if (ok)
                io_ok = read_at(fd, *gbuf, size, pos);
            if (!io_ok) /* a failed read is not a corrupt heap */
                return mieb_fail(MIEB_ERR_IO, "%s: read error at byte %llu: %s", path, (unsigned long long)pos,
                                 errno ? strerror(errno) : "unexpected end of file");
            ok = ok && gcol_walk_ok(*gbuf, size, ss);
            if (!ok)
                return mieb_fail(MIEB_ERR_BAD_DATA,
                                 "%s: corrupt global heap collection at byte %llu (holds variable-length "
                                 "strings and string attributes); refusing to let HDF5 parse it",
                                 path, (unsigned long long)pos);
        }
    }
    return MIEB_OK;
}

mieb_status mieb_h5_check_global_heaps(int fd, const char *path, int64_t file_size)
{
    mieb_status st = MIEB_OK;
    uint8_t *buf = NULL, *gbuf = NULL;
    uint64_t gcap = 0;
    int ss = superblock_sizeof_size(fd, file_size);
    if (ss < 0)
        st = mieb_fail(MIEB_ERR_IO, "%s: cannot read the superblock: %s", path, strerror(errno));
    if (ss == 2 || ss == 4 || ss == 8) { /* no superblock: H5Fopen will say so */
        if (!(buf = malloc(SCAN_WINDOW + 8))) {
            st = mieb_fail(MIEB_ERR_OOM, "%s: out of memory", path);
        } else if (file_size <= SCAN_WHOLE_MAX) {
            st = scan_range(fd, path, 0, file_size, file_size, ss, buf, &gbuf, &gcap);
        } else {
            st = scan_range(fd, path, 0, SCAN_WINDOW, file_size, ss, buf, &gbuf, &gcap);
            if (st == MIEB_OK)
                st = scan_range(fd, path, file_size - SCAN_WINDOW, file_size, file_size, ss, buf, &gbuf, &gcap);
        }
    }
    free(buf);
    free(gbuf);
    return st;
}
