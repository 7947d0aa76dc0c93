/**
 * screen_amx.c - the screen's 32 x 32 blocks of approximate scores on the AMX matrix unit
 * (screen_pass.c packs the operands and turns the blocks into candidates).
 *
 * Queries are the A operand (16 rows of 32 bf16 per tile, straight from the bf16 query
 * rows), documents the B operand (the VNNI layout). Four accumulator tiles hold 32 queries
 * x 32 documents; per 32 elements of K the block loads two tiles of each and issues four
 * TDPBF16PS. The pass's loop order keeps one pair of query groups' tiles (2 x 24 KiB at
 * K = 768) in L1 while 256 bf16 document rows (384 KiB) sit in L2: about 1 TFLOP/s-
 * equivalent per core, against about 0.1 for fp32 FMA (docs/DESIGN.md).
 *
 * Compiled with AVX-512, AVX512_BF16, AMX-TILE and AMX-BF16 (CMakeLists.txt); only called
 * when mieb_screen_available() chose the AMX kernel.
 */

#include "screen_base.h"

/* gcc spells the AMX macros __AMX_TILE__ / __AMX_BF16__, clang __AMXTILE__ / __AMXBF16__ */
#if defined(__x86_64__) && (defined(__AMX_TILE__) || defined(__AMXTILE__)) && \
    (defined(__AMX_BF16__) || defined(__AMXBF16__)) && defined(__AVX512BF16__)
#include <immintrin.h>

void mieb_screen_amx_begin(void)
{
    struct screen_amx_cfg cfg;
    screen_amx_cfg_16x64(&cfg);
    _tile_loadconfig(&cfg);
}

void mieb_screen_amx_end(void) { _tile_release(); }

void mieb_screen_amx_block(const uint16_t *a0, const uint16_t *a1, const uint16_t *b0, const uint16_t *b1,
                           int64_t KP, float *cb)
{
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (int64_t kc = 0; kc < KP; kc += SCREEN_KSTEP) {
        _tile_loadd(4, a0 + kc, KP * 2);
        _tile_loadd(5, a1 + kc, KP * 2);
        _tile_loadd(6, b0 + kc * 16, 64);
        _tile_loadd(7, b1 + kc * 16, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, cb, 128);
    _tile_stored(1, cb + 16, 128);
    _tile_stored(2, cb + 16 * 32, 128);
    _tile_stored(3, cb + 16 * 32 + 16, 128);
}

const int mieb_screen_amx_built = 1;

#else /* a compiler or target without AMX: the AMX kernel is never chosen */

const int mieb_screen_amx_built = 0;

void mieb_screen_amx_begin(void) {}
void mieb_screen_amx_end(void) {}
void mieb_screen_amx_block(const uint16_t *a0, const uint16_t *a1, const uint16_t *b0, const uint16_t *b1,
                           int64_t KP, float *cb)
{
    (void)a0;
    (void)a1;
    (void)b0;
    (void)b1;
    (void)KP;
    (void)cb;
}
#endif
