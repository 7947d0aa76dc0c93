/**
 * cpu_backend.h - the CPU backend (BLAS + threads, always built): the reference every
 * other backend is checked against, and the one host/dispatch/ runs when the chosen
 * backend cannot.
 */
#ifndef MIEB_CPU_BACKEND_H
#define MIEB_CPU_BACKEND_H

#include "../backend/backend.h"

/** A CPU backend with opts (NULL: all defaults). */
mieb_status mieb_backend_cpu_init(const struct mieb_backend_opts *opts, struct mieb_backend **out);

/** The CPU's kernels (the fixed-order dot, the screens, OpenBLAS's core), as its describe slot
    names them: also what runs the host's share of any other backend's run (dispatch.h). */
void mieb_cpu_describe(mieb_describe_fn put, void *user);

#endif
