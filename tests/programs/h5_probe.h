/**
 * h5_probe.h - the forked HDF5 probe (h5_probe.c): a measuring instrument, not part of the
 * program. h5_guard_measure runs it against the in-process guard of host/io (h5_guard.h;
 * docs/BAD_INPUT.md, "The in-process guard and the forked probe, measured"); a build
 * configured with -DMIEB_H5_PROBE_IN_OPEN=1 (2: the data too) runs it in every
 * mieb_h5_open_ro, to time it.
 */
#ifndef MIEB_TESTS_H5_PROBE_H
#define MIEB_TESTS_H5_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"

struct mieb_h5_probe_opts {
    unsigned timeout_s; /* CPU seconds for the child (wall clock: twice that) */
    uint64_t mem_bytes; /* address space the child may add (RLIMIT_AS; 0: no limit; none under ASan) */
    bool read_data;     /* read every element of every dataset too, not only the metadata */
};
enum mieb_h5_probe_verdict {
    MIEB_H5_PROBE_CLEAN,    /* every object, attribute (and value) read without an error */
    MIEB_H5_PROBE_H5_ERROR, /* libhdf5 reported an error and went on: the readers meet it too */
    MIEB_H5_PROBE_CRASH,    /* the child died of a signal or exited abnormally (a sanitizer report) */
    MIEB_H5_PROBE_TIMEOUT,  /* out of CPU or wall-clock time */
    MIEB_H5_PROBE_MEMORY,   /* an allocation beyond mem_bytes failed */
};
/**
 * Open path with libhdf5 in a forked child and read every object's header, every attribute
 * (dense storage included) and, with read_data, every dataset's data. MIEB_OK for CLEAN and
 * H5_ERROR; MIEB_ERR_BAD_DATA naming the file and what happened for the others.
 */
mieb_status mieb_h5_probe_file(const char *path, const struct mieb_h5_probe_opts *o,
                               enum mieb_h5_probe_verdict *v);
/** The probe's walk in this process, without fork or limits (to measure it under ASan). */
enum mieb_h5_probe_verdict mieb_h5_probe_walk_here(const char *path, bool read_data);

/** -DMIEB_H5_PROBE_IN_OPEN builds: the probe mieb_h5_open_ro runs after the guard's checks. */
mieb_status mieb_h5_probe_in_open(const char *path);

#endif
