/**
 * screen_int8_amx.c - the int8 screen's kernel on the AMX tiles: TDPBSSD, signed bytes by
 * signed bytes into int32, 16 x 16 x 64 products per instruction.
 *
 * 32 queries x 32 documents per call in four accumulator tiles (C00 C01 C10 C11), as the
 * bf16 AMX kernel (screen_amx.c) does. Per 64 elements of K: two A tiles hold 16 query rows
 * each (64 bytes of each row), two B tiles the 16 quads of two groups of 16 documents
 * (the quad layout's 16 consecutive 64-byte rows, screen_base.h); four TDPBSSD add
 * C[m][n] += sum over the 64 elements of A[m][.] B[.][n]. The sums wrap modulo 2^32 like any
 * int32 sum, and the integers fit int32 (K <= SCREEN_I8_MAX_K): exact. No offset: both
 * operands are signed. Output: out[g][i][j], g the group, i < 32 the query, j < 16.
 *
 * Compiled with -mamx-tile -mamx-int8 (CMakeLists.txt); only called when cpu_features
 * reports AMX-INT8 and Linux granted the tile state (mieb_cpu_amx_enable).
 * MIEB_SCREEN_I8_EMULATE compiles the same code against a model of the tiles written from
 * Intel's pseudocode (tests/unit/i8_emu/, the test suite's only).
 */
#include <stdint.h>

#include "screen_base.h"

#if defined(MIEB_SCREEN_I8_EMULATE)
#include MIEB_SCREEN_I8_EMULATE
#define I8_KERNEL(name) name##_emu
#define I8_AMX_HERE 1
/* gcc spells the AMX macros __AMX_TILE__ / __AMX_INT8__, clang __AMXTILE__ / __AMXINT8__ */
#elif defined(__x86_64__) && (defined(__AMX_TILE__) || defined(__AMXTILE__)) && \
    (defined(__AMX_INT8__) || defined(__AMXINT8__))
#include <immintrin.h>
#define I8_KERNEL(name) name
#define I8_AMX_HERE 1
const int mieb_screen_i8_amx_built = 1;
#endif

#if defined(I8_AMX_HERE)

void I8_KERNEL(mieb_screen_i8_amx_begin)(void)
{
    struct screen_amx_cfg cfg;
    screen_amx_cfg_16x64(&cfg);
    _tile_loadconfig(&cfg);
}

void I8_KERNEL(mieb_screen_i8_amx_end)(void) { _tile_release(); }

void I8_KERNEL(mieb_screen_i8_dots_amx)(const int8_t *qa, int64_t KQ, const uint8_t *dv, const int32_t *qsum,
                                        int32_t *out)
{
    _Static_assert(SCREEN_I8_AMX_MQ == 32 && SCREEN_I8_AMX_NG == 2 && SCREEN_I8_AMX_KSTEP == 64,
                   "the kernel's tile is 32 x 32, K in steps of 64");
    (void)qsum; /* signed by signed: nothing to correct */
    const uint8_t *dv1 = dv + SCREEN_I8_ND * KQ;
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (int64_t kc = 0; kc < KQ; kc += 64) {
        _tile_loadd(4, qa + kc, KQ);
        _tile_loadd(5, qa + 16 * KQ + kc, KQ);
        _tile_loadd(6, dv + kc * SCREEN_I8_ND, 64); /* quads kc / 4 .. kc / 4 + 15: 16 rows of 64 bytes */
        _tile_loadd(7, dv1 + kc * SCREEN_I8_ND, 64);
        _tile_dpbssd(0, 4, 6);
        _tile_dpbssd(1, 4, 7);
        _tile_dpbssd(2, 5, 6);
        _tile_dpbssd(3, 5, 7);
    }
    /* [g][32][16]: group 0's queries 0-15 and 16-31, then group 1's */
    _tile_stored(0, out, 64);
    _tile_stored(2, out + 16 * SCREEN_I8_ND, 64);
    _tile_stored(1, out + 32 * SCREEN_I8_ND, 64);
    _tile_stored(3, out + 48 * SCREEN_I8_ND, 64);
}

#else /* a compiler or target without AMX-INT8: the kernel is never chosen */

const int mieb_screen_i8_amx_built = 0;

void mieb_screen_i8_amx_begin(void) {}
void mieb_screen_i8_amx_end(void) {}
void mieb_screen_i8_dots_amx(const int8_t *qa, int64_t KQ, const uint8_t *dv, const int32_t *qsum, int32_t *out)
{
    mieb_screen_i8_quad_dots_scalar(qa, KQ, dv, qsum, out, SCREEN_I8_AMX_MQ, SCREEN_I8_AMX_NG, 0);
}
#endif
