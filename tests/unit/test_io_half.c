/* test_io_half.c - float16 / bfloat16 conversions: exhaustive widening, rounding of narrowing. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "core/half.h"

/* Reference value of a binary16 bit pattern, from its definition. */
static double half_ref(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
    return s ? -v : v;
}

int main(void)
{
    /* widening: every finite pattern exact, inf/nan classified, sign of zero kept */
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = mieb_half_to_float((uint16_t)h);
        int e = (h >> 10) & 0x1f;
        if (e == 31) {
            bool want_nan = (h & 0x3ff) != 0;
            if (want_nan ? !isnan(f) : !(isinf(f) && (signbit(f) != 0) == ((h >> 15) != 0)))
                bad++;
            continue;
        }
        if ((double)f != half_ref((uint16_t)h) || (signbit(f) != 0) != ((h >> 15) != 0))
            bad++;
        /* narrowing an exactly representable value gives the same bits back */
        if (mieb_float_to_half(f) != (uint16_t)h)
            bad++;
    }
    CHECK_MSG(bad == 0, "%d half patterns wrong", bad);
    CHECK(mieb_half_to_float(0x0001) == 0x1p-24f);      /* smallest subnormal */
    CHECK(mieb_half_to_float(0x03ff) == 0x3ffp-24f);    /* largest subnormal */
    CHECK(mieb_half_to_float(0x0400) == 0x1p-14f);      /* smallest normal */
    CHECK(mieb_half_to_float(0x7bff) == 65504.0f);
    CHECK(mieb_half_to_float(0xc000) == -2.0f);

    /* narrowing: round to nearest, ties to even, overflow to inf, underflow to zero */
    CHECK(mieb_float_to_half(1.0f + 0x1p-11f) == 0x3c00);          /* tie -> even (down) */
    CHECK(mieb_float_to_half(1.0f + 3 * 0x1p-11f) == 0x3c02);      /* tie -> even (up) */
    CHECK(mieb_float_to_half(1.0f + 0x1p-11f + 0x1p-20f) == 0x3c01);
    CHECK(mieb_float_to_half(65504.0f) == 0x7bff);
    CHECK(mieb_float_to_half(65519.0f) == 0x7bff);
    CHECK(mieb_float_to_half(65520.0f) == 0x7c00);
    CHECK(mieb_float_to_half(-1e10f) == 0xfc00);
    CHECK(mieb_float_to_half(0x1p-25f) == 0x0000);                 /* tie -> even zero */
    CHECK(mieb_float_to_half(0x1.8p-25f) == 0x0001);
    CHECK(mieb_float_to_half(0x3p-25f) == 0x0002);                 /* 1.5 ulp tie -> even 2 */
    CHECK(mieb_float_to_half(0x1p-30f) == 0x0000);
    CHECK(mieb_float_to_half(-0.0f) == 0x8000);
    CHECK(mieb_float_to_half(0x1.ffcp-15f) == 0x0400);             /* rounds up into the normals */
    CHECK((mieb_float_to_half(NAN) & 0x7c00) == 0x7c00 && (mieb_float_to_half(NAN) & 0x3ff) != 0);

    /* bfloat16 */
    bad = 0;
    for (uint32_t b = 0; b < 65536; b++) {
        float f = mieb_bf16_to_float((uint16_t)b);
        uint32_t bits;
        memcpy(&bits, &f, 4);
        if (bits != b << 16)
            bad++;
        if (!isnan(f) && mieb_float_to_bf16(f) != (uint16_t)b)
            bad++;
    }
    CHECK_MSG(bad == 0, "%d bf16 patterns wrong", bad);
    CHECK(mieb_float_to_bf16(1.0f + 0x1p-8f) == 0x3f80);           /* tie -> even */
    CHECK(mieb_float_to_bf16(1.0f + 3 * 0x1p-8f) == 0x3f82);
    CHECK(mieb_float_to_bf16(1.0f + 0x1p-8f + 0x1p-20f) == 0x3f81);
    CHECK(isnan(mieb_bf16_to_float(mieb_float_to_bf16(NAN))));
    return check_done("test_io_half");
}
