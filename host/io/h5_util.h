/**
 * h5_util.h - small HDF5 helpers shared by the readers (task_data.c, embeddings.c).
 *
 * Thread rule: Debian's libhdf5 is the serial, non-thread-safe build, so every HDF5 call
 * made by host/io goes through one process-wide recursive lock (mieb_h5_lock). All the
 * functions here take it themselves. Only host/io calls HDF5: the other folders go through
 * its helpers (h5_write.h, h5_append.h), which take it too; a direct call elsewhere would
 * race with the embedding streamer's background thread. (The forked probe of tests/tools,
 * a measuring instrument outside the program, takes the lock to fork.)
 *
 * HDF5's own error-stack printing is switched off (mieb_h5_init); failures are reported
 * through mieb_fail() with "<file>: <dataset path>: <what is wrong>", plus the innermost
 * HDF5 message where the library itself failed.
 *
 * Every function returning mieb_status leaves *out untouched (or NULL) on failure.
 */
#ifndef MIEB_IO_H5_UTIL_H
#define MIEB_IO_H5_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hdf5.h>

#include "../core/status.h"

/** Silence HDF5's error printing (idempotent, thread-safe). Called by every open helper. */
void mieb_h5_init(void);
/** The process-wide recursive HDF5 lock. */
void mieb_h5_lock(void);
void mieb_h5_unlock(void);

/**
 * mieb_fail() for a failed HDF5 call: the formatted message, then "(HDF5: <innermost
 * message>)" when HDF5 left one; the HDF5 error stack is cleared. Returns st.
 */
mieb_status mieb_h5_fail(mieb_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Did the HDF5 call that just failed fail on a read of the file or out of memory (its error
    stack says so), rather than on the file's content? The stack is left as it is. */
bool mieb_h5_failed_on_io(void);

/** Which file a checked input was: a reopen must find the same one, unchanged. */
struct mieb_h5_ident {
    uint64_t dev, ino;
    int64_t size, mtime_ns;
};

/**
 * Open an existing HDF5 file read-only. Missing file: MIEB_ERR_NOT_FOUND; not a regular file
 * (a FIFO, a directory: refused without blocking): MIEB_ERR_IO; not HDF5, truncated or otherwise
 * unopenable: MIEB_ERR_BAD_DATA. *file_size gets the byte size on disk (used to refuse
 * impossible declared sizes); it may be NULL, and so may ident (which file it was, for
 * mieb_h5_reopen_ro).
 *
 * The path is opened once (h5_open.c): the guards read that descriptor and HDF5 opens it
 * through /proc/self/fd, so a file renamed over the path meanwhile is never read.
 */
mieb_status mieb_h5_open_ro(const char *path, hid_t *out, int64_t *file_size);
mieb_status mieb_h5_open_ro_ident(const char *path, hid_t *out, int64_t *file_size, struct mieb_h5_ident *ident);
/**
 * mieb_h5_open_ro without the guards, for a file already opened and checked once: the path
 * must still name that file (ident, unchanged), else MIEB_ERR_BAD_DATA naming the path.
 */
mieb_status mieb_h5_reopen_ro(const char *path, const struct mieb_h5_ident *ident, hid_t *out);
/**
 * HDF5's own descriptor of an open file (the sec2 driver's), borrowed: valid while the file
 * is open, never closed by the caller. Read it with pread only (HDF5 keeps its own position).
 * MIEB_ERR_UNSUPPORTED (no message) for another file driver.
 */
mieb_status mieb_h5_file_fd(hid_t file, int *fd);

/**
 * Does the object at path exist? Every link on the way is looked up in turn, and each
 * object's header is checked (mieb_h5_check_object) before HDF5 goes through it.
 * Failure: a refused header (MIEB_ERR_BAD_DATA), I/O error, out of memory.
 */
mieb_status mieb_h5_lookup(hid_t loc, const char *path, const char *fname, bool *found);
/** mieb_h5_lookup as a bool that answers true when in doubt (the read then reports why). */
bool mieb_h5_exists(hid_t loc, const char *path);
/** Is path an existing dataset? */
bool mieb_h5_is_dataset(hid_t loc, const char *path);

/* ---- attributes; fname/objpath only name the location in messages ---- */
/** Does obj have attribute name? Checks obj's attribute messages first (h5_ohdr_check.c). */
mieb_status mieb_h5_attr_find(hid_t obj, const char *name, const char *fname, const char *objpath, bool *found);
/** Scalar (or 1-element) string attribute, variable or fixed length. *out is malloc'd. */
mieb_status mieb_h5_attr_str(hid_t obj, const char *name, const char *fname, const char *objpath, char **out);
/** Scalar (or 1-element) integer attribute of any integer type up to 64 bits; a value outside int64 is refused. */
mieb_status mieb_h5_attr_i64(hid_t obj, const char *name, const char *fname, const char *objpath, int64_t *out);
/** Scalar (or 1-element) integer or float attribute, as double; NaN or Inf is refused. */
mieb_status mieb_h5_attr_f64(hid_t obj, const char *name, const char *fname, const char *objpath, double *out);

/** Short type name for messages: "int32", "uint16", "float64", "float16", "string", "compound" ... */
void mieb_h5_type_name(hid_t type, char *buf, size_t n);

/**
 * Open dataset dpath (absolute) and return its rank and dims. Missing: MIEB_ERR_NOT_FOUND.
 * The rank must be in [min_rank, max_rank] and the declared size must be plausible for
 * a file of file_size bytes (mieb_h5_check_plausible), else MIEB_ERR_BAD_DATA.
 */
mieb_status mieb_h5_dset_open(hid_t file, const char *fname, const char *dpath, int min_rank, int max_rank,
                              int64_t file_size, hid_t *dset, int *rank, int64_t dims[2]);

/**
 * Refuse declared sizes the file cannot hold before anything is allocated: raw bytes
 * beyond the file size (unfiltered storage), beyond 1100x the file size (deflate's best
 * ratio is about 1032:1), chunks above 512 MiB, external or virtual storage. Then refuse
 * what HDF5 would read without an error but not from the file: filters it cannot decode
 * (mieb_h5_check_filters) and storage never written (mieb_h5_check_written).
 */
mieb_status mieb_h5_check_plausible(hid_t dset, const char *fname, const char *dpath, int64_t file_size);

/**
 * Refuse a dataset whose filters this HDF5 cannot decode, naming the filter (HDF5 itself
 * says only that its plugin directory is missing). Called by mieb_h5_check_plausible, with
 * the HDF5 lock held (as is mieb_h5_check_written).
 */
mieb_status mieb_h5_check_filters(hid_t dcpl, const char *fname, const char *dpath);
/**
 * Refuse a dataset with storage never written, which HDF5 reads back as the fill value:
 * created without data (unallocated), or chunked with chunks missing (an exporter killed
 * mid-write). Names the first run of missing rows. One pass over the chunk index, once per
 * dataset at open (mieb_h5_check_plausible).
 */
mieb_status mieb_h5_check_written(hid_t dset, hid_t dcpl, const char *fname, const char *dpath, int rank,
                                  const hsize_t *dims);
/**
 * One integer of `size` bytes (1, 2, 4, 8; native byte order) as int64. False when it does
 * not fit (an unsigned value above INT64_MAX) or size is not one of those; *raw gets its bits
 * zero-extended, for the message. HDF5's own conversion would clamp it without a word.
 */
bool mieb_h5_int_to_i64(const void *src, size_t size, bool is_signed, int64_t *out, uint64_t *raw);

/**
 * Read a whole 1-D or 2-D integer dataset (any integer type up to 64 bits) as int64; a value
 * that does not fit (uint64 above INT64_MAX) is refused with its position, never clamped.
 * dims[1] is 1 for a 1-D dataset. *out is malloc'd (at least one element, so never NULL).
 */
mieb_status mieb_h5_read_i64(hid_t file, const char *fname, const char *dpath, int min_rank, int max_rank,
                             int64_t file_size, int64_t **out, int64_t dims[2]);
/** Read a whole 1-D numeric dataset (integer or float) as float64; NaN or Inf is refused with its position. */
mieb_status mieb_h5_read_f64(hid_t file, const char *fname, const char *dpath, int64_t file_size, double **out,
                             int64_t *n);

/**
 * Read a 1-D string dataset (variable-length or fixed-length, UTF-8 or ASCII). Every
 * string must be valid UTF-8. Result: one malloc'd block, an array of n pointers
 * followed by the NUL-terminated bytes, so free(*out) releases everything.
 */
mieb_status mieb_h5_read_strings(hid_t file, const char *fname, const char *dpath, int64_t file_size, char ***out,
                                 int64_t *n);

/** True if s[0..len) is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF). */
bool mieb_utf8_valid(const char *s, size_t len);

#endif
