/**
 * h5_guard.h - the one door to the checks that keep corrupt files away from libhdf5 1.10.
 *
 * libhdf5 1.10.8 trusts sizes, addresses and indices recorded in a file: on a corrupt one it
 * reads past its buffers, follows garbage heap IDs, allocates gigabytes or loops forever
 * (found by fuzzing: tests/fuzz/regressions/, docs/BAD_INPUT.md). Every HDF5 reader of
 * host/io reaches it only through the functions below, called in front of the HDF5 call
 * they protect (from host/io's h5_open.c, h5_util.c and h5_read.c):
 *
 *   before H5Fopen                 mieb_h5_check_global_heaps, mieb_h5_check_root_header
 *   before HDF5 loads a header     mieb_h5_check_object (every link on a path; with the header,
 *                                  its filter pipeline and its group's local heap free list)
 *   before any attribute lookup    mieb_h5_check_attr_msgs
 *   string attributes              mieb_h5_attr_raw_vlen + mieb_h5_vlen_string_at (HDF5 never
 *                                  follows their heap IDs)
 *   string datasets                mieb_h5_vlen_strings_raw
 *   when a dataset is opened       mieb_h5_check_compact, mieb_h5_check_chunk_dims,
 *                                  mieb_h5_check_chunks
 *
 * Why in-process parsing and not a forked probe (tests/programs/h5_probe.c, which lets
 * libhdf5 walk the whole file in a child under a time and a memory limit): measured on the
 * 404 distinct HDF5 files of the fuzz regressions, seeds and a fresh fuzz corpus
 * (bench/h5_guard_vs_probe.py; docs/BAD_INPUT.md, "The in-process guard and the forked
 * probe, measured"), libhdf5 reads out of bounds (ASan) on 20 and loops on 1. The guard
 * refuses all 21 before the access. The probe in a release build catches 6 (5 crashes, the
 * loop); the other 15 read past a buffer without crashing, pass it, and the parent then
 * makes the same read. It also costs a fork per file: 13-20 ms per file in `mieb-eval run`
 * (a 143-file suite: 0.5-0.6 s with the guard alone, 2.3-3.5 s with the probe added), and
 * about 110 ms more per GiB the parent holds (fork copies its page tables); the guard costs
 * 0.45 ms per file (median; the probe, data included, 7.6 ms). What the probe would add,
 * attributes in dense storage and shared messages, has no known failing input. The probe
 * stays as the measuring instrument, outside the program (tests/programs/h5_guard_measure.c; a
 * build configured with -DMIEB_H5_PROBE_IN_OPEN=1 or 2 runs it in every mieb_h5_open_ro, for timing).
 *
 * Implementations, in host/hdf5: h5_guard_headers.c (object headers and links),
 * h5_guard_attrs.c (raw string attributes, file layout), h5_guard_heaps.c (global heaps),
 * h5_guard_storage.c (dataset storage and chunks).
 */
#ifndef MIEB_HDF5_H5_GUARD_H
#define MIEB_HDF5_H5_GUARD_H

#include "h5_base.h"

/** Receives string i of a dataset (not NUL-terminated); returns MIEB_OK to go on. */
typedef mieb_status (*mieb_h5_str_sink)(void *user, int64_t i, const char *s, size_t len);
/**
 * Read the n strings of a contiguous variable-length string dataset by parsing the heap
 * references and global heap collections directly (bounds-checked), because libhdf5 1.10
 * can hang or crash on corrupted global heaps. MIEB_ERR_UNSUPPORTED: layout not handled
 * here (chunked, compact, unallocated); use H5Dread instead.
 */
mieb_status mieb_h5_vlen_strings_raw(hid_t file, hid_t ds, const char *fname, const char *dpath, int64_t file_size,
                                     int64_t n, mieb_h5_str_sink sink, void *user);

/**
 * Before HDF5 opens a file: find its global heap collections (the whole file up to 16 MiB,
 * else the first and last MiB, where attribute heaps are written) and refuse the file when
 * one is malformed in a way that makes libhdf5 1.10 loop forever or read out of bounds.
 * Called by mieb_h5_open_ro. Residual risk, documented: a corrupted heap *index* inside a
 * string attribute itself is not detectable without parsing object headers.
 */
mieb_status mieb_h5_check_global_heaps(int fd, const char *path, int64_t file_size);

/** Where the bytes of an HDF5 file are, for the readers that parse them directly. */
struct mieb_h5_layout {
    int fd;            /* HDF5's descriptor of the file (mieb_h5_file_fd), or the opener's; borrowed */
    int sa, ss;        /* sizeof_addr, sizeof_size (2, 4 or 8) */
    uint64_t base;     /* base address: the userblock size */
    int64_t file_size;
};
/**
 * The layout of the file holding obj. MIEB_ERR_UNSUPPORTED (no message): address sizes other
 * than 2/4/8, or a file open for writing (its metadata may still be only in HDF5's cache).
 */
mieb_status mieb_h5_layout_of(hid_t obj, const char *fname, struct mieb_h5_layout *lay);

/** Bytes of a raw heap ID as mieb_h5_attr_raw_vlen returns it (4 + sizeof_addr + 4, zero-padded). */
#define MIEB_H5_RAW_VLEN_SIZE 32
/** The heap ID of a one-element variable-length string attribute, as stored (HDF5 never follows it). */
mieb_status mieb_h5_attr_raw_vlen(hid_t attr, const char *fname, const char *objpath, const char *name,
                                  uint8_t out[MIEB_H5_RAW_VLEN_SIZE]);
/**
 * The string a raw heap ID refers to, fetched from its global heap collection with every
 * bound checked (h5_guard_heaps.c). *out is malloc'd and NUL-terminated. what names it in messages.
 */
mieb_status mieb_h5_vlen_string_at(hid_t obj, const uint8_t *heap_id, const char *fname, const char *what,
                                   char **out);
/**
 * Walk obj's object header and refuse it (MIEB_ERR_BAD_DATA, naming fname and objpath)
 * when an attribute message's name, datatype, dataspace or value runs past the message:
 * libhdf5 1.10 would read past its buffer decoding it. Call before any attribute lookup.
 */
mieb_status mieb_h5_check_attr_msgs(hid_t obj, const char *fname, const char *objpath);
/**
 * Before HDF5 loads the header of the object at path (relative to loc): refuse it
 * (MIEB_ERR_BAD_DATA) when a header chunk's recorded size runs past the end of the file
 * (HDF5 would allocate that much first), when the link is not a hard link (an external
 * link would make HDF5 open another file, perhaps a FIFO that blocks; a soft link would
 * skip this check), and when the object is a virtual dataset or keeps its data in
 * external raw files (H5Pset_external). The file and the link path are named.
 */
mieb_status mieb_h5_check_object(hid_t loc, const char *path, const char *fname);
/** The same for the root group, from the superblock, before H5Fopen (mieb_h5_open_ro). */
mieb_status mieb_h5_check_root_header(int fd, const char *path, int64_t file_size);

/* ---- dataset storage, when a dataset is opened (mieb_h5_check_plausible; HDF5 lock held) ---- */

/** A compact dataset's stored buffer must be exactly what its shape needs (1.10 memcpy's the shape's size). */
mieb_status mieb_h5_check_compact(hid_t dset, hid_t ty, int rank, const hsize_t *dims, const char *fname,
                                  const char *dpath);
/** No chunk dimension longer than a fixed dataset dimension (1.10 reads past the decompressed chunk). */
mieb_status mieb_h5_check_chunk_dims(int rank, const hsize_t *cdims, const hsize_t *maxd, const char *fname,
                                     const char *dpath);
/**
 * Unfiltered chunks: every allocated chunk exactly one chunk long and inside the file (1.10
 * copies a whole chunk out of what the index records). Datasets of more than 2^20 chunks are
 * not checked (documented).
 */
mieb_status mieb_h5_check_chunks(hid_t dset, const char *fname, const char *dpath, int rank, const hsize_t *dims,
                                 const hsize_t *cdims, hid_t ty, uint64_t fsz);

#endif
