/**
 * h5_append.h - one-dimensional HDF5 datasets that grow as they are written: created empty
 * and chunked, extended by each append, and read back whole or by ranges of elements. The
 * corpus parts' partial files (host/parts/partial.h) keep their offers in two of them.
 *
 * Elements are float32 or int64, stored little-endian; buffers are in native order. Every
 * function takes the global HDF5 lock (h5_util.h) and names the file and dataset in its
 * failure message.
 */
#ifndef MIEB_HDF5_H5_APPEND_H
#define MIEB_HDF5_H5_APPEND_H

#include <stdint.h>

#include <hdf5.h>

#include "../core/status.h"

/** The element type of a dataset here. */
enum mieb_h5_elem { MIEB_H5_F32, MIEB_H5_I64 };

/** Create empty dataset /name in file (fname names it in messages), growable without bound, in chunks of chunk elements. */
mieb_status mieb_h5_growable_create(hid_t file, const char *fname, const char *name, enum mieb_h5_elem t, int64_t chunk,
                            hid_t *out);
/** Extend d from `at` to `at + n` elements and write buf there (nothing when n == 0). */
mieb_status mieb_h5_growable_append(hid_t d, const char *fname, const char *name, enum mieb_h5_elem t, int64_t at, int64_t n,
                            const void *buf);

/** Read the whole of 1-D dataset d into dst. */
mieb_status mieb_h5_growable_read_all(hid_t d, const char *fname, const char *name, enum mieb_h5_elem t, void *dst);
/** Read elements e0 .. e1 (exclusive) of 1-D dataset d into dst. */
mieb_status mieb_h5_growable_read_range(hid_t d, const char *fname, const char *name, enum mieb_h5_elem t, int64_t e0,
                                int64_t e1, void *dst);

/** Close dataset d once written (a negative id is ignored); a failure is "<fname>: closing failed". */
mieb_status mieb_h5_growable_close(hid_t d, const char *fname);
/** Close dataset d on a way out where a failure changes nothing (a negative id is ignored; no message). */
void mieb_h5_growable_discard(hid_t d);
/** Close a file opened for reading (mieb_h5_open_ro; a negative id is ignored; no message). */
void mieb_h5_file_close(hid_t file);

#endif
