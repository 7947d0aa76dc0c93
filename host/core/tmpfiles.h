/**
 * tmpfiles.h - names of the temporaries behind every atomic write, and the clean-up of
 * those a killed run left behind.
 *
 * A result, per-query file, partial or HDF5 file of synth is written to <path>.tmp.<host>.<pid> and renamed
 * over <path> once complete, so readers never see half a file. SIGKILL (or a node failure)
 * cannot clean up, so the next run over the same folders removes the temporaries whose
 * writer is known to be gone: written on this host (the name says which) by a process
 * that no longer exists. Temporaries of other hosts (runs on other nodes of a cluster
 * sharing the folder) and of live processes are never touched.
 */
#ifndef MIEB_CORE_TMPFILES_H
#define MIEB_CORE_TMPFILES_H

#include <stddef.h>

#include "status.h"

/** out = "<path>.tmp.<host>.<pid>" (MIEB_ERR_INVALID_ARG when it does not fit in n bytes). */
mieb_status mieb_tmp_path(const char *path, char *out, size_t n);

/**
 * Remove this host's temporaries of dead processes in dir and, down to `depth` levels, in
 * its sub-folders. Returns how many were removed (each logged); a missing dir is no error.
 */
int mieb_clean_stale_tmp(const char *dir, int depth);

/** Remove this process's own temporaries in dir (down to `depth` levels), silently: for the
    interrupt watchdog (stop.h), which ends the process while a writer may be stuck. */
int mieb_remove_own_tmp(const char *dir, int depth);

#endif
