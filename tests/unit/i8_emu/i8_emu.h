/**
 * i8_emu.h - portable models of the instructions of the int8 screen's VNNI and AMX-INT8
 * kernels, so that the test suite runs those kernels' own source on any CPU
 * (tests/CMakeLists.txt compiles host/screen/screen_int8_{vnni512,avxvnni,amx}.c a second
 * time with -DMIEB_SCREEN_I8_EMULATE="i8_emu.h"; the functions get the suffix _emu).
 *
 * The SIMD intrinsics are SIMDe's (Debian's libsimde-dev), an implementation independent
 * of this project, compiled without the instruction sets so that it takes its portable
 * paths. AVX-VNNI's VEX VPDPBUSD computes what AVX512_VNNI's 256-bit form computes. The
 * AMX tiles are amx_model.h's, written from Intel's pseudocode.
 */
#ifndef MIEB_TEST_I8_EMU_H
#define MIEB_TEST_I8_EMU_H

#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

#define _mm256_dpbusd_avx_epi32(src, a, b) simde_mm256_dpbusd_epi32(src, a, b)

#include "amx_model.h"

#endif
