/**
 * kernel_image.h - whether this build holds device code the current GPU can run.
 *
 * The build compiles its kernels for CMAKE_CUDA_ARCHITECTURES (80;90 by default: sm_80
 * code and PTX, which runs on every compute capability 8.x and, through the driver's JIT,
 * on newer ones, and sm_90). A 7.x GPU has no image in such a build, and without this
 * check the first kernel launch would fail deep inside a task. mieb_cuda_ctx_init asks
 * at start-up instead, so --device cuda fails with the rebuild to do and --device auto
 * falls back to the CPU before anything is scored.
 */
#ifndef MIEB_CUDA_KERNEL_IMAGE_H
#define MIEB_CUDA_KERNEL_IMAGE_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/** cudaSuccess when a kernel of this build can run on the current device; otherwise the
 * runtime's reason (cudaErrorNoKernelImageForDevice, or cudaErrorInvalidDeviceFunction
 * with older drivers). Leaves the runtime's last error as it found it. */
cudaError_t mieb_cuda_probe_kernel_image(void);

#ifdef __cplusplus
}
#endif
#endif
