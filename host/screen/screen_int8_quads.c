/**
 * screen_int8_quads.c - the int8 screen's quad layout (screen_base.h): the packing that
 * VPDPBUSD's and TDPBSSD's kernels read, and the portable kernel that defines the integers
 * they must give.
 *
 * Why a second layout: the pair layout (int16, VPMADDWD) multiplies 2 elements per 32-bit
 * lane; VPDPBUSD and TDPBSSD multiply 4 bytes per lane, twice the products per instruction,
 * so they need the elements as bytes in groups of four. The integers are the quantiser's
 * (screen_int8.c), narrowed from int16 (they lie in [-127, 127]).
 */
#include <string.h>

#include "screen_base.h"

void mieb_screen_i8_quad_pack_query(const int16_t *q16, int64_t KP, int64_t KQ, int8_t *out, int32_t *qsum)
{
    int32_t sum = 0;
    for (int64_t k = 0; k < KP; k++) {
        out[k] = (int8_t)q16[k];
        sum += q16[k];
    }
    memset(out + KP, 0, (size_t)(KQ - KP));
    *qsum = sum;
}

void mieb_screen_i8_quad_pack_doc(const int16_t *q16, int64_t KP, int64_t KQ, int doc_u8, int col, uint8_t *group)
{
    uint8_t off = doc_u8 ? 128 : 0; /* + 128: the byte of the unsigned operand (wraps for the signed one) */
    for (int64_t k = 0; k < KQ; k++) {
        int v = q16 && k < KP ? q16[k] : 0;
        group[(k / 4) * (4 * SCREEN_I8_ND) + 4 * col + (k % 4)] = (uint8_t)((uint8_t)v + off);
    }
}

/* The definition: every kernel of the layout must give these integers, bit for bit. The
   correction is taken modulo 2^32, as the kernels take it, so that the test of a large K
   checks the wrap-around of their sums too. */
void mieb_screen_i8_quad_dots_scalar(const int8_t *qa, int64_t KQ, const uint8_t *dv, const int32_t *qsum,
                                 int32_t *out, int mq, int ng, int doc_u8)
{
    for (int g = 0; g < ng; g++)
        for (int i = 0; i < mq; i++)
            for (int j = 0; j < SCREEN_I8_ND; j++) {
                const uint8_t *grp = dv + (int64_t)g * SCREEN_I8_ND * KQ;
                uint32_t acc = 0;
                for (int64_t k = 0; k < KQ; k++) {
                    uint8_t b = grp[(k / 4) * (4 * SCREEN_I8_ND) + 4 * j + (k % 4)];
                    int32_t d = doc_u8 ? (int32_t)b : (int32_t)(int8_t)b;
                    acc += (uint32_t)(qa[(int64_t)i * KQ + k] * d);
                }
                if (doc_u8)
                    acc -= 128u * (uint32_t)qsum[i];
                out[((int64_t)g * mq + i) * SCREEN_I8_ND + j] = (int32_t)acc;
            }
}
