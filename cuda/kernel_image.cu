/**
 * kernel_image.cu - see kernel_image.h. An empty kernel compiled like every other one:
 * if the runtime finds an image of it for the device, it finds the others too.
 */
#include "kernel_image.h"

static __global__ void mieb_kernel_image_probe(void) {}

extern "C" cudaError_t mieb_cuda_probe_kernel_image(void)
{
    struct cudaFuncAttributes attr;
    const cudaError_t e = cudaFuncGetAttributes(&attr, mieb_kernel_image_probe);
    if (e != cudaSuccess)
        (void)cudaGetLastError(); /* not sticky: the caller reports it */
    return e;
}
