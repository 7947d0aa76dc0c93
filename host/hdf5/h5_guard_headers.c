/*
 * h5_guard_headers.c - object headers checked before libhdf5 1.10 decodes them.
 *
 * HDF5 1.10.8 decodes header messages trusting the sizes recorded in them. Found by
 * fuzzing (tests/fuzz/regressions/, docs/BAD_INPUT.md): H5O_attr_decode memcpy's an
 * attribute's value from wherever its name, datatype and dataspace sizes point, far past
 * the header chunk when one is corrupt; the datatype decoder strdup's compound member and
 * enum names without a bound; a header chunk whose recorded size runs past the end of the
 * file is first allocated (8 GiB for a 12 KB file). So before HDF5 loads an object's header
 * we walk it ourselves (HDF5 file format spec, "Data Object Headers", versions 1 and 2,
 * continuation blocks included): every chunk inside the file, every datatype, dataspace and
 * filter pipeline message well formed, a group's local heap free list finite and inside the
 * heap, and, before any attribute lookup (H5Aexists, H5Aopen and H5Aiterate
 * decode all of an object's attribute messages), every attribute's parts and value inside
 * its message. It runs on the root group before H5Fopen (mieb_h5_check_root_header), on
 * every object reached by path (mieb_h5_check_object, from mieb_h5_lookup) and on an
 * object's attributes (mieb_h5_check_attr_msgs).
 *
 * Residual risk, documented: attributes in dense storage (a fractal heap, only written
 * with more than 8 attributes and the 1.8+ file format) and shared messages are not
 * parsed here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5_guard.h"

#define MAX_CHUNKS 256               /* object header chunks walked per object */
#define MAX_CHUNK_BYTES (1ULL << 24) /* no legitimate header chunk is that large */

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint64_t pad8(uint64_t x) { return (x + 7) & ~(uint64_t)7; }

/* pread exactly n bytes (short reads retried); false with errno set (EIO at end of file). */
static bool read_full(int fd, void *buf, size_t n, uint64_t at)
{
    uint8_t *p = buf;
    while (n > 0) {
        ssize_t r = pread(fd, p, n, (off_t)at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = EIO;
            return false;
        }
        p += r, n -= (size_t)r, at += (uint64_t)r;
    }
    return true;
}

struct oh_walk {
    int fd;
    const struct mieb_h5_layout *lay;
    const char *fname, *objpath;
    uint64_t pending[MAX_CHUNKS][2]; /* continuation blocks still to walk: address, length */
    int n_pending, n_walked;
    bool attrs; /* check attribute messages too, not only the header's own bounds */
};

static mieb_status corrupt(const struct oh_walk *w, const char *what, uint64_t at)
{
    return mieb_fail(MIEB_ERR_BAD_DATA,
                     "%s: %s: corrupt object header (%s, at byte %llu); refusing to let HDF5 decode it", w->fname,
                     w->objpath, what, (unsigned long long)at);
}

/* A dataset whose data lives in other files: opening or reading them could block (a FIFO)
   or read what no check here has seen, so only data stored in the file itself is read. */
static mieb_status elsewhere(const struct oh_walk *w, const char *what)
{
    return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: %s; refused: only data stored in this file is read", w->fname,
                     w->objpath, what);
}

/* Read len bytes at relative address addr into a fresh buffer, refusing ranges outside the file. */
static mieb_status read_block(struct oh_walk *w, uint64_t addr, uint64_t len, uint8_t **out)
{
    uint64_t abs = w->lay->base + addr, fsz = (uint64_t)w->lay->file_size;
    *out = NULL;
    if (abs < addr || abs > fsz || len > fsz - abs || len > MAX_CHUNK_BYTES)
        return corrupt(w, "a header block lies outside the file", abs);
    uint8_t *b = malloc(len ? len : 1);
    if (!b)
        return mieb_fail(MIEB_ERR_OOM, "%s: out of memory reading an object header", w->fname);
    if (!read_full(w->fd, b, len, abs)) {
        int e = errno;
        free(b);
        return mieb_fail(MIEB_ERR_IO, "%s: reading %llu bytes at %llu: %s", w->fname, (unsigned long long)len,
                         (unsigned long long)abs, strerror(e));
    }
    *out = b;
    return MIEB_OK;
}

/* The element count a dataspace message describes (HDF5's H5O__sdspace_decode, v1 and v2). */
static bool dataspace_points(const uint8_t *p, uint64_t n, int ss, uint64_t *points)
{
    if (n < 4 || (p[0] != 1 && p[0] != 2))
        return false;
    unsigned rank = p[1], flags = p[2];
    uint64_t at = p[0] == 1 ? 8 : 4;
    if (rank > 32)
        return false;
    uint64_t need = at + (uint64_t)rank * (uint64_t)ss * ((flags & 1) ? 2 : 1);
    if (need > n)
        return false;
    if (p[0] == 2 && p[3] == 2) { /* null dataspace */
        *points = 0;
        return true;
    }
    uint64_t np = 1;
    for (unsigned i = 0; i < rank; i++)
        if (__builtin_mul_overflow(np, le(p + at + (uint64_t)i * (uint64_t)ss, ss), &np))
            return false;
    *points = np;
    return true;
}

/* Bytes a little-endian unsigned needs, as HDF5's H5VM_limit_enc_size (compound offsets, v3). */
static unsigned enc_size(uint64_t v)
{
    unsigned bits = 0;
    while (v >>= 1)
        bits++;
    return bits / 8 + 1;
}

/* Length of the NUL-terminated name at p[0..n) including its NUL, or 0 without one. */
static uint64_t name_len(const uint8_t *p, uint64_t n)
{
    const uint8_t *z = memchr(p, 0, n);
    return z ? (uint64_t)(z - p) + 1 : 0;
}

/*
 * Bytes of the encoded datatype at p[0..n) (HDF5 file format, "Datatype Message", versions
 * 1 to 3), or 0 when it does not fit: H5O__dtype_decode_helper (1.10) reads every field
 * and strdup's every compound member and enum name without a bound (found by fuzzing).
 */
static uint64_t dtype_len(const uint8_t *p, uint64_t n, int depth)
{
    if (n < 8 || depth > 32)
        return 0;
    unsigned cls = p[0] & 0x0f, ver = p[0] >> 4;
    uint32_t flags = (uint32_t)p[1] | (uint32_t)p[2] << 8 | (uint32_t)p[3] << 16;
    uint64_t size = le(p + 4, 4), at = 8, k;
    if (ver < 1 || ver > 3)
        return 0;
    switch (cls) {
    case 0: case 4: at += 4; break; /* fixed-point, bitfield: offset, precision */
    case 1: at += 12; break;        /* floating point */
    case 2: at += 2; break;         /* time */
    case 3: case 7: break;          /* string, reference */
    case 5: at += flags & 0xff; break; /* opaque: its tag (copied with a bound) */
    case 6:                         /* compound: name, offset, [v1 array info], type per member */
        for (unsigned m = 0; m < (flags & 0xffff); m++) {
            if (at >= n || !(k = name_len(p + at, n - at)))
                return 0;
            at += ver < 3 ? pad8(k) : k;
            at += ver < 3 ? 4 : enc_size(size);
            if (ver == 1)
                at += 28; /* dimensionality, reserved, permutation, reserved, 4 dimensions */
            if (at >= n || !(k = dtype_len(p + at, n - at, depth + 1)))
                return 0;
            at += k;
        }
        break;
    case 8: { /* enumeration: base type, then the names, then the values */
        if (!(k = dtype_len(p + at, n - at, depth + 1)))
            return 0;
        uint64_t base = le(p + at + 4, 4), nm = flags & 0xffff;
        at += k;
        for (uint64_t m = 0; m < nm; m++) {
            if (at >= n || !(k = name_len(p + at, n - at)))
                return 0;
            at += ver < 3 ? pad8(k) : k;
        }
        if (base > (n - (at < n ? at : n)) / (nm ? nm : 1))
            return 0;
        at += nm * base;
        break;
    }
    case 9: /* variable length: base type */
        if (!(k = dtype_len(p + at, n - at, depth + 1)))
            return 0;
        at += k;
        break;
    case 10: { /* array: rank, [reserved], dimensions, [permutation], base type */
        if (at >= n)
            return 0;
        uint64_t nd = p[at];
        at += ver < 3 ? 4 + 8 * nd : 1 + 4 * nd;
        if (nd > 32 || at >= n || !(k = dtype_len(p + at, n - at, depth + 1)))
            return 0;
        at += k;
        break;
    }
    default: return 0;
    }
    return at <= n ? at : 0;
}

/*
 * A filter pipeline message (versions 1 and 2) whose every filter name ends inside its
 * recorded length and whose client data values lie inside the message: H5O__pline_decode
 * (1.10) strlen's and strcpy's a name with no bound and reads the values without one
 * (found by fuzzing: a corrupt name length read past the header chunk).
 */
static bool pline_ok(const uint8_t *m, uint64_t n)
{
    if (n < 2 || (m[0] != 1 && m[0] != 2) || m[1] > 32)
        return false;
    unsigned ver = m[0], nf = m[1];
    uint64_t at = ver == 1 ? 8 : 2;
    for (unsigned f = 0; f < nf; f++) {
        if (at + 2 > n)
            return false;
        uint64_t id = le(m + at, 2), name = 0;
        at += 2;
        if (ver == 1 || id >= 256) { /* the name length is there */
            if (at + 2 > n)
                return false;
            name = le(m + at, 2);
            at += 2;
        }
        if (at + 4 > n)
            return false;
        uint64_t cd = le(m + at + 2, 2); /* after the flags */
        at += 4;
        if (name) {
            if (name > n - at || !memchr(m + at, 0, name))
                return false;
            at += name; /* version 1 lengths are multiples of 8 (HDF5 checks that itself) */
        }
        at += 4 * cd + (ver == 1 && (cd & 1) ? 4 : 0);
        if (at > n)
            return false;
    }
    return true;
}

/*
 * The local heap of a group's symbol table (old-style groups): HDF5 1.10 builds the heap's
 * free list by following the offsets stored in the heap with no bound on their number, so
 * a list that returns to an earlier block makes H5HL__fl_deserialize allocate nodes until
 * memory runs out (found by fuzzing), and a block that starts within 2 lengths of the end
 * is decoded past the heap. Refused: a prefix or data block outside the file, a block
 * not wholly inside the data, more blocks than fit in it.
 */
static mieb_status check_local_heap(struct oh_walk *w, uint64_t addr, uint64_t at)
{
    int sa = w->lay->sa, ss = w->lay->ss;
    uint8_t *b = NULL;
    MIEB_TRY(read_block(w, addr, 8 + 2 * (uint64_t)ss + (uint64_t)sa, &b));
    bool sig = memcmp(b, "HEAP", 4) == 0 && b[4] == 0;
    uint64_t size = le(b + 8, ss), next = le(b + 8 + ss, ss), data = le(b + 8 + 2 * ss, sa);
    free(b);
    if (!sig)
        return corrupt(w, "symbol table's local heap has no HEAP signature", at);
    uint64_t fsz = (uint64_t)w->lay->file_size, abs = w->lay->base + data;
    if (size && (abs < data || abs > fsz || size > fsz - abs))
        return corrupt(w, "symbol table's local heap lies outside the file", at);
    uint64_t entry = 2 * (uint64_t)ss, max_blocks = size / entry;
    for (uint64_t k = 0; next != 1; k++) { /* 1: HDF5's end of the free list */
        if (k >= max_blocks || next >= size || entry > size - next)
            return corrupt(w, "symbol table's local heap has a corrupt free list", at);
        uint8_t fb[16];
        if (!read_full(w->fd, fb, (size_t)entry, abs + next))
            return mieb_fail(MIEB_ERR_IO, "%s: reading a local heap at %llu: %s", w->fname,
                             (unsigned long long)(abs + next), strerror(errno));
        uint64_t len = le(fb + ss, ss), start = next;
        next = le(fb, ss);
        if (len > size - start || next == 0)
            return corrupt(w, "symbol table's local heap has a corrupt free list", at);
    }
    return MIEB_OK;
}

/* One attribute message body [0, n): every part, and the value, inside the message. */
static mieb_status check_attr_msg(struct oh_walk *w, const uint8_t *m, uint64_t n, uint64_t at)
{
    if (n < 8)
        return corrupt(w, "attribute message too short", at);
    /* version 1 has no flags: HDF5 skips that byte whatever it holds, so it must not make
       this check treat the datatype as shared and skip the value (found by fuzzing) */
    unsigned ver = m[0], flags = ver >= 2 ? m[1] : 0;
    if (ver < 1 || ver > 3)
        return corrupt(w, "unknown attribute message version", at);
    uint64_t name_len = le(m + 2, 2), dt_len = le(m + 4, 2), ds_len = le(m + 6, 2);
    uint64_t off = ver == 3 ? 9 : 8;
    uint64_t (*part)(uint64_t) = ver == 1 ? pad8 : NULL; /* version 1 pads each part to 8 bytes */
#define PART(x) (part ? part(x) : (x))
    if (off > n || name_len < 1 || name_len > n - off || m[off + name_len - 1] != '\0')
        return corrupt(w, "attribute name runs past its message", at);
    off += PART(name_len);
    /* a shared datatype or dataspace keeps the value's size in another object, which HDF5
       loads and trusts; no writer of these files shares them, so they are refused */
    if (flags & 3)
        return corrupt(w, "attribute with a shared datatype or dataspace", at);
    if (off > n || dt_len > n - off || dt_len < 8)
        return corrupt(w, "attribute datatype runs past its message", at);
    if (!dtype_len(m + off, dt_len, 0))
        return corrupt(w, "attribute datatype is malformed", at);
    const uint8_t *dt = m + off;
    off += PART(dt_len);
    if (off > n || ds_len > n - off)
        return corrupt(w, "attribute dataspace runs past its message", at);
    const uint8_t *ds = m + off;
    off += PART(ds_len);
#undef PART
    if (off > n)
        return corrupt(w, "attribute value starts past its message", at);
    uint64_t points = 0, esz = le(dt + 4, 4), bytes;
    if (!dataspace_points(ds, ds_len, w->lay->ss, &points))
        return corrupt(w, "attribute dataspace is malformed", at);
    /* Variable length: a heap ID (length, collection address, index) on disk. HDF5 sizes
       the value it keeps by the recorded size but copies heap IDs out at their real size,
       so a recorded size that differs reads past its buffer (found by fuzzing). */
    if ((dt[0] & 0x0f) == 9 && esz != 4 + (uint64_t)w->lay->sa + 4)
        return corrupt(w, "variable-length attribute type has the wrong size", at);
    if (__builtin_mul_overflow(points, esz, &bytes) || bytes > n - off)
        return corrupt(w, "attribute value runs past its message", at);
    return MIEB_OK;
}

/* Walk the messages of one chunk body [0, n); msg_hdr: 8 (v1) or 4/6 (v2) bytes. */
static mieb_status walk_messages(struct oh_walk *w, const uint8_t *c, uint64_t n, uint64_t at, int ver,
                                 bool crt_order)
{
    uint64_t hdr = ver == 1 ? 8 : (crt_order ? 6 : 4);
    for (uint64_t p = 0; p + hdr <= n;) {
        unsigned type = ver == 1 ? (unsigned)le(c + p, 2) : c[p];
        uint64_t sz = ver == 1 ? le(c + p + 2, 2) : le(c + p + 1, 2);
        unsigned mflags = ver == 1 ? c[p + 4] : c[p + 3];
        if (sz > n - p - hdr)
            return corrupt(w, "a message runs past its header chunk", at + p);
        const uint8_t *m = c + p + hdr;
        uint64_t points;
        /* the object's own datatype and dataspace: HDF5 decodes them unbounded on open */
        if (type == 0x03 && !(mflags & 0x02) && !dtype_len(m, sz, 0))
            return corrupt(w, "datatype message is malformed", at + p);
        if (type == 0x01 && !(mflags & 0x02) && !dataspace_points(m, sz, w->lay->ss, &points))
            return corrupt(w, "dataspace message is malformed", at + p);
        if (type == 0x0b && !(mflags & 0x02) && !pline_ok(m, sz))
            return corrupt(w, "filter pipeline message is malformed", at + p);
        if (type == 0x11 && !(mflags & 0x02)) { /* symbol table: v1 B-tree, local heap */
            if (sz < 2 * (uint64_t)w->lay->sa)
                return corrupt(w, "symbol table message too short", at + p);
            MIEB_TRY(check_local_heap(w, le(m + w->lay->sa, w->lay->sa), at + p));
        }
        if (w->attrs && type == 0x0c && !(mflags & 0x02))
            MIEB_TRY(check_attr_msg(w, m, sz, at + p));
        if (type == 0x07 || (type == 0x08 && sz >= 2 && m[0] >= 3 && m[1] == 3))
            return elsewhere(w, type == 0x07 ? "its data is stored in external raw files (H5Pset_external)"
                                             : "it is a virtual dataset (its data is mapped from other datasets)");
        if (type == 0x10) { /* continuation: another chunk to walk */
            int sa = w->lay->sa, ss = w->lay->ss;
            if (sz < (uint64_t)(sa + ss))
                return corrupt(w, "continuation message too short", at + p);
            if (w->n_pending + w->n_walked >= MAX_CHUNKS)
                return corrupt(w, "too many continuation blocks", at + p);
            w->pending[w->n_pending][0] = le(m, sa);
            w->pending[w->n_pending][1] = le(m + sa, ss);
            w->n_pending++;
        }
        p += hdr + sz;
        if (ver == 1)
            p = pad8(p);
    }
    return MIEB_OK;
}

static mieb_status walk_header(struct oh_walk *w, uint64_t addr)
{
    uint8_t *b = NULL;
    mieb_status st;
    uint64_t fsz = (uint64_t)w->lay->file_size, abs = w->lay->base + addr;
    uint64_t pre_max = abs < fsz ? fsz - abs : 0;
    uint8_t pre[48];
    uint64_t pre_n = pre_max < sizeof pre ? pre_max : sizeof pre;
    if (pre_n < 16)
        return corrupt(w, "object header lies outside the file", abs);
    MIEB_TRY(read_block(w, addr, pre_n, &b));
    memcpy(pre, b, pre_n);
    free(b);
    int ver;
    bool crt = false;
    uint64_t body_at, body_len;
    if (memcmp(pre, "OHDR", 4) == 0) {
        ver = 2;
        unsigned fl = pre[5];
        if (pre[4] != 2)
            return corrupt(w, "unknown object header version", abs);
        uint64_t q = 6 + ((fl & 0x20) ? 16 : 0) + ((fl & 0x10) ? 4 : 0);
        int szb = 1 << (fl & 3);
        if (q + (uint64_t)szb > pre_n)
            return corrupt(w, "object header prefix truncated", abs);
        body_len = le(pre + q, szb);
        body_at = addr + q + (uint64_t)szb;
        crt = (fl & 0x04) != 0;
    } else if (pre[0] == 1) {
        ver = 1;
        body_len = le(pre + 8, 4);
        body_at = addr + 16;
    } else {
        return corrupt(w, "unknown object header version", abs);
    }
    MIEB_TRY(read_block(w, body_at, body_len, &b));
    st = walk_messages(w, b, body_len, w->lay->base + body_at, ver, crt);
    free(b);
    while (st == MIEB_OK && w->n_pending > 0) {
        uint64_t ca = w->pending[w->n_pending - 1][0], cl = w->pending[w->n_pending - 1][1];
        w->n_pending--;
        w->n_walked++;
        if ((st = read_block(w, ca, cl, &b)) != MIEB_OK)
            break;
        if (ver == 1) {
            st = walk_messages(w, b, cl, w->lay->base + ca, 1, false);
        } else if (cl < 8 || memcmp(b, "OCHK", 4) != 0) {
            st = corrupt(w, "continuation block without its OCHK signature", w->lay->base + ca);
        } else {
            st = walk_messages(w, b + 4, cl - 8, w->lay->base + ca + 4, 2, crt); /* minus signature, checksum */
        }
        free(b);
    }
    return st;
}

/* Walk the header at relative address addr of the file described by lay. */
static mieb_status walk_at(const struct mieb_h5_layout *lay, uint64_t addr, bool attrs, const char *fname,
                           const char *objpath)
{
    mieb_status st;
    struct oh_walk *w = calloc(1, sizeof *w);
    if (!w)
        return mieb_fail(MIEB_ERR_OOM, "%s: out of memory", fname);
    w->lay = lay, w->fname = fname, w->objpath = objpath, w->attrs = attrs;
    w->fd = lay->fd; /* borrowed: the opener's or HDF5's descriptor, never the path again */
    st = walk_header(w, addr);
    free(w);
    return st;
}

mieb_status mieb_h5_check_attr_msgs(hid_t obj, const char *fname, const char *objpath)
{
    struct mieb_h5_layout lay;
    haddr_t addr = HADDR_UNDEF;
    mieb_status st = mieb_h5_layout_of(obj, fname, &lay);
    if (st == MIEB_ERR_UNSUPPORTED)
        return MIEB_OK; /* an address size we do not parse: HDF5 is on its own there */
    if (st != MIEB_OK)
        return st;
    mieb_h5_lock();
#if H5_VERSION_GE(1, 12, 0)
    H5O_info2_t info;
    herr_t rc = H5Oget_info3(obj, &info, H5O_INFO_BASIC);
    if (rc >= 0)
        rc = H5VLnative_token_to_addr(obj, info.token, &addr);
#else
    H5O_info_t info;
    herr_t rc = H5Oget_info2(obj, &info, H5O_INFO_BASIC);
    if (rc >= 0)
        addr = info.addr;
#endif
    mieb_h5_unlock();
    if (rc < 0 || addr == HADDR_UNDEF)
        return mieb_h5_fail(MIEB_ERR_HDF5, "%s: %s: cannot locate the object header", fname, objpath);
    return walk_at(&lay, (uint64_t)addr, true, fname, objpath);
}

/* Why the link at path, not a hard link, is refused: its kind and target. */
static mieb_status refuse_link(hid_t loc, const char *path, const char *fname, H5L_type_t type, size_t val_size)
{
    char *val = val_size ? calloc(val_size + 1, 1) : NULL;
    const char *file = NULL, *obj = NULL;
    unsigned flags = 0;
    bool got = val && H5Lget_val(loc, path, val, val_size, H5P_DEFAULT) >= 0;
    mieb_status st;
    if (type == H5L_TYPE_EXTERNAL && got && H5Lunpack_elink_val(val, val_size, &flags, &file, &obj) >= 0)
        st = mieb_fail(MIEB_ERR_BAD_DATA,
                       "%s: %s is an external link to %s:%s (another file); refused: links to other files are "
                       "not followed", fname, path, file, obj);
    else if (type == H5L_TYPE_SOFT && got)
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s is a soft link to %s; refused: only hard links are followed",
                       fname, path, val);
    else
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s is a%s link; refused: only hard links are followed", fname, path,
                       type == H5L_TYPE_EXTERNAL ? "n external" : type == H5L_TYPE_SOFT ? " soft" : " user-defined");
    free(val);
    H5Eclear2(H5E_DEFAULT);
    return st;
}

/* The header address of the object a hard link names; any other link is refused before
   HDF5 follows it (an external link opens another file, which may be a FIFO and block). */
static mieb_status hard_link_addr(hid_t loc, const char *path, const char *fname, haddr_t *addr)
{
    mieb_status st = MIEB_OK;
    *addr = HADDR_UNDEF;
    mieb_h5_lock();
#if H5_VERSION_GE(1, 12, 0)
    H5L_info2_t li;
    herr_t rc = H5Lget_info2(loc, path, &li, H5P_DEFAULT);
    if (rc >= 0 && li.type == H5L_TYPE_HARD)
        rc = H5VLnative_token_to_addr(loc, li.u.token, addr);
#else
    H5L_info_t li;
    herr_t rc = H5Lget_info(loc, path, &li, H5P_DEFAULT);
    if (rc >= 0 && li.type == H5L_TYPE_HARD)
        *addr = li.u.address;
#endif
    if (rc < 0)
        st = mieb_h5_fail(MIEB_ERR_HDF5, "%s: %s: cannot read the link", fname, path);
    else if (li.type != H5L_TYPE_HARD)
        st = refuse_link(loc, path, fname, li.type, li.u.val_size);
    mieb_h5_unlock();
    return st;
}

mieb_status mieb_h5_check_object(hid_t loc, const char *path, const char *fname)
{
    struct mieb_h5_layout lay;
    haddr_t addr = HADDR_UNDEF;
    MIEB_TRY(hard_link_addr(loc, path, fname, &addr));
    mieb_status st = mieb_h5_layout_of(loc, fname, &lay);
    if (st == MIEB_ERR_UNSUPPORTED)
        return MIEB_OK;
    if (st != MIEB_OK)
        return st;
    if (addr == HADDR_UNDEF)
        return mieb_fail(MIEB_ERR_HDF5, "%s: %s: the link names no object header", fname, path);
    return walk_at(&lay, (uint64_t)addr, false, fname, path);
}

mieb_status mieb_h5_check_root_header(int fd, const char *path, int64_t file_size)
{
    static const uint8_t sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    struct mieb_h5_layout lay;
    uint8_t sb[128];
    ssize_t got = 0;
    memset(&lay, 0, sizeof lay);
    lay.fd = fd;
    lay.file_size = file_size;
    /* the superblock: at 0, 512, 1024, ... (after a user block) */
    int64_t at = 0;
    bool found = false;
    for (; at + 16 <= file_size; at = at ? at * 2 : 512) {
        got = file_size - at < (int64_t)sizeof sb ? (ssize_t)(file_size - at) : (ssize_t)sizeof sb;
        if (!read_full(fd, sb, (size_t)got, (uint64_t)at)) {
            int e = errno; /* the guard is not skipped because a read failed: report it */
            return mieb_fail(MIEB_ERR_IO, "%s: cannot read the superblock: %s", path, strerror(e));
        }
        if (memcmp(sb, sig, 8) == 0) {
            found = true;
            break;
        }
    }
    if (!found)
        return MIEB_OK; /* no superblock: H5Fopen says so itself */
    int root_at; /* where the root group's object header address is */
    if (sb[8] <= 1) { /* versions 0 and 1: in the root group's symbol table entry */
        lay.sa = sb[13], lay.ss = sb[14];
        root_at = (sb[8] == 0 ? 24 : 28) + 5 * lay.sa;
    } else { /* versions 2 and 3 */
        lay.sa = sb[9], lay.ss = sb[10];
        root_at = 12 + 3 * lay.sa;
    }
    if ((lay.sa != 2 && lay.sa != 4 && lay.sa != 8) || root_at + lay.sa > got)
        return MIEB_OK; /* odd or truncated: H5Fopen judges it */
    uint64_t root = le(sb + root_at, lay.sa);
    if (lay.ss != 2 && lay.ss != 4 && lay.ss != 8)
        return MIEB_OK;
    lay.base = (uint64_t)at;
    return walk_at(&lay, root, false, path, "/");
}
