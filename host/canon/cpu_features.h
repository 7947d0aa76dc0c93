/**
 * cpu_features.h - which SIMD and matrix units this CPU and its OS let us use.
 *
 * The CPU backend's kernels are compiled for several instruction sets in one binary
 * (canon_dot_*.c here, host/screen's screen_*.c) and chosen at run time, so one build runs
 * on any x86-64 machine and uses what each has. A unit counts as present only when the CPU
 * reports it (CPUID) and the OS saves its registers (XCR0); AMX also needs Linux's
 * per-process permission, which mieb_cpu_amx_enable() asks for.
 */
#ifndef MIEB_CANON_CPU_FEATURES_H
#define MIEB_CANON_CPU_FEATURES_H

#ifdef __cplusplus
extern "C" {
#endif

struct mieb_cpu_features {
    int avx2_fma;    /**< AVX2 and FMA3, YMM state enabled */
    int avx512;      /**< AVX-512 F, DQ, BW and VL, ZMM state enabled */
    int avx512_bf16; /**< AVX512_BF16 (vcvtne2ps2bf16, vdpbf16ps) on top of avx512 */
    int amx_bf16;    /**< AMX-TILE and AMX-BF16 reported, tile state in XCR0 (permission: see below) */
    int avx512_vnni; /**< AVX512_VNNI (vpdpbusd on ZMM) on top of avx512 */
    int avx_vnni;    /**< AVX-VNNI (the VEX vpdpbusd on YMM) on top of avx2_fma */
    int amx_int8;    /**< AMX-TILE and AMX-INT8 reported, tile state in XCR0 (permission: see below) */
};

/** The features of this machine, detected once (thread-safe). All zero off x86-64. */
const struct mieb_cpu_features *mieb_cpu_features(void);

/**
 * Ask Linux for the AMX tile data state (arch_prctl ARCH_REQ_XCOMP_PERM) once per process.
 * Returns 1 when the AMX tiles (AMX-BF16 or AMX-INT8) may be used from every thread of the process, else 0 (no AMX,
 * an older kernel, or the request refused). Thread-safe; the answer is cached.
 */
int mieb_cpu_amx_enable(void);

#ifdef __cplusplus
}
#endif
#endif
