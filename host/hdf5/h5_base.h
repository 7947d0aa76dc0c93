/**
 * h5_base.h - the bottom of the HDF5 files (h5_base.c): the one-time set-up, the lock,
 * failures turned into messages, HDF5's descriptor of an open file, the UTF-8 check. The
 * guard (h5_guard.h) sits on it in host/hdf5, and host/io's readers and writers on both.
 *
 * Thread rule: Debian's libhdf5 is the serial, non-thread-safe build, so every HDF5 call
 * made by host/hdf5 and host/io goes through one process-wide recursive lock (mieb_h5_lock).
 * All the helpers of host/io take it themselves. Only those two folders call HDF5: the others
 * go through host/io's helpers (h5_write.h, h5_append.h), which take it too; a direct call elsewhere would
 * race with the embedding streamer's background thread. (The forked probe of tests/programs,
 * a measuring instrument outside the program, takes the lock to fork.)
 *
 * HDF5's own error-stack printing is switched off (mieb_h5_init); failures are reported
 * through mieb_fail() with "<file>: <dataset path>: <what is wrong>", plus the innermost
 * HDF5 message where the library itself failed.
 */
#ifndef MIEB_HDF5_H5_BASE_H
#define MIEB_HDF5_H5_BASE_H

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

/**
 * HDF5's own descriptor of an open file (the sec2 driver's), borrowed: valid while the file
 * is open, never closed by the caller. Read it with pread only (HDF5 keeps its own position).
 * MIEB_ERR_UNSUPPORTED (no message) for another file driver.
 */
mieb_status mieb_h5_file_fd(hid_t file, int *fd);

/** True if s[0..len) is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF). */
bool mieb_utf8_valid(const char *s, size_t len);

#endif
