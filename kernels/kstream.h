/**
 * kstream.h - what a kernel launcher needs of the CUDA backend: the stream to launch on
 * and whether to synchronise after each launch (debug). The launchers take it by value,
 * so kernels/ knows nothing of the backend's context (cuda/cuda_ctx.h makes one with
 * mieb_cuda_ks).
 */
#ifndef MIEB_KERNELS_KSTREAM_H
#define MIEB_KERNELS_KSTREAM_H

#include <cuda_runtime_api.h>

#include "core/status.h" /* mieb_status, what the launchers return */

struct mieb_kstream {
    cudaStream_t stream;
    int sync_check; /* synchronise the stream after every launch (MIEB_CUDA_CHECK_LAUNCH) */
};

#endif
