/**
 * cuda_init.h - the CUDA backend's constructor, the one name of cuda/ that the rest of
 * mieb-eval calls (host/dispatch/ picks the device). Plain C: no CUDA headers.
 */
#ifndef MIEB_CUDA_INIT_H
#define MIEB_CUDA_INIT_H

#include "backend/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A CUDA backend on opts->device_index; MIEB_ERR_NO_DEVICE (with the reason) when it is unusable. */
mieb_status mieb_backend_cuda_init(const struct mieb_backend_opts *opts, struct mieb_backend **out);

#ifdef __cplusplus
}
#endif
#endif
