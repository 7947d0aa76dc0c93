/**
 * host_device.h - lets one inline function serve the C host code and CUDA kernels alike.
 *
 * MIEB_HOSTDEV marks a function __host__ __device__ under nvcc and is empty elsewhere. The
 * MIEB_F* / MIEB_D* operations round every product, sum, quotient and square root on
 * their own, as numpy and torch's elementwise code do: on the device through the _rn
 * intrinsics (which nvcc never fuses into an FMA), on the host through plain operators in
 * files built with -ffp-contract=off. A function written with them gives the same bits on
 * both sides, which is how the CUDA backend's STS and compositionality kernels equal the
 * CPU reference exactly.
 */
#ifndef MIEB_CORE_HOST_DEVICE_H
#define MIEB_CORE_HOST_DEVICE_H

#ifdef __CUDACC__
#define MIEB_HOSTDEV __host__ __device__
#else
#define MIEB_HOSTDEV
#endif

#if defined(__CUDA_ARCH__)
#define MIEB_FMUL(a, b) __fmul_rn((a), (b))
#define MIEB_FADD(a, b) __fadd_rn((a), (b))
#define MIEB_FSUB(a, b) __fsub_rn((a), (b))
#define MIEB_FDIV(a, b) __fdiv_rn((a), (b))
#define MIEB_FSQRT(a) __fsqrt_rn(a)
#define MIEB_DMUL(a, b) __dmul_rn((a), (b))
#define MIEB_DADD(a, b) __dadd_rn((a), (b))
#define MIEB_DSUB(a, b) __dsub_rn((a), (b))
#define MIEB_DDIV(a, b) __ddiv_rn((a), (b))
#define MIEB_DSQRT(a) __dsqrt_rn(a)
#else
#define MIEB_FMUL(a, b) ((float)(a) * (float)(b))
#define MIEB_FADD(a, b) ((float)(a) + (float)(b))
#define MIEB_FSUB(a, b) ((float)(a) - (float)(b))
#define MIEB_FDIV(a, b) ((float)(a) / (float)(b))
#define MIEB_FSQRT(a) sqrtf(a)
#define MIEB_DMUL(a, b) ((double)(a) * (double)(b))
#define MIEB_DADD(a, b) ((double)(a) + (double)(b))
#define MIEB_DSUB(a, b) ((double)(a) - (double)(b))
#define MIEB_DDIV(a, b) ((double)(a) / (double)(b))
#define MIEB_DSQRT(a) sqrt(a)
#endif

#endif
