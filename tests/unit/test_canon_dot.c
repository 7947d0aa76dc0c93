/*
 * test_canon_dot.c - the fixed-order dot product (host/canon/canon_dot.h).
 *
 * 1. The scalar definition equals an independent rendering of the documented order whose
 *    fused multiply-adds are computed in binary128 and rounded once to binary32 (not
 *    glibc's fmaf), so the order the header promises is the order the code runs.
 * 2. Every SIMD kernel this CPU runs (AVX2, AVX-512) gives the scalar bits, for the tile
 *    GEMM and for the row-gather variant, on shapes around every blocking edge (K around
 *    16, 32, 768, tails of 1..15; m, n around the 4 x 4 / 2 x 3 tiles and the B panels)
 *    and on values that stress rounding: mixed magnitudes, cancellation to +-0, subnormal
 *    products, and sums that overflow to infinity.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "canon/canon_dot.h"
#include "check.h"

static unsigned long long rng = 0x243F6A8885A308D3ull;
static uint64_t next_u64(void) { return check_rng_u64(&rng); }
static double uni(void) { return check_rng_uniform(&rng); }

/* binary128 is wide enough that x*y + acc of binary32 values rounds once (to 113 bits,
   far from any binary32 midpoint in these tests) before the final rounding to binary32. */
static float fma_ref(float x, float y, float acc) { return (float)((__float128)x * (__float128)y + (__float128)acc); }

static float ref_dot(const float *a, const float *b, int64_t K)
{
    float lane[16] = {0};
    for (int64_t k = 0; k < (K + 15) / 16 * 16; k++)
        lane[k % 16] = fma_ref(k < K ? a[k] : 0.0f, k < K ? b[k] : 0.0f, lane[k % 16]);
    float s8[8], s4[4], s2[2];
    for (int l = 0; l < 8; l++)
        s8[l] = lane[l] + lane[l + 8];
    for (int l = 0; l < 4; l++)
        s4[l] = s8[l] + s8[l + 4];
    for (int l = 0; l < 2; l++)
        s2[l] = s4[l] + s4[l + 2];
    return s2[0] + s2[1];
}

enum fill { F_GAUSS, F_MIXED, F_CANCEL, F_TINY, F_HUGE };

static void fill(float *v, int64_t n, enum fill f)
{
    for (int64_t i = 0; i < n; i++) {
        double g = sqrt(-2.0 * log(uni() + 1e-300)) * cos(6.283185307179586 * uni());
        switch (f) {
        case F_GAUSS:
            v[i] = (float)g;
            break;
        case F_MIXED: /* magnitudes over 2^-40 .. 2^40: sums lose low bits in every order */
            v[i] = (float)ldexp(g, (int)(next_u64() % 81) - 40);
            break;
        case F_CANCEL: /* small integers and halves: many exact ties and exact zeros (+-0) */
            v[i] = (float)((int)(next_u64() % 5) - 2) * ((next_u64() & 1) ? 0.5f : 1.0f);
            if (next_u64() % 7 == 0)
                v[i] = -0.0f;
            break;
        case F_TINY: /* products in the subnormal range */
            v[i] = (float)ldexp(g, -70);
            break;
        case F_HUGE: /* products near FLT_MAX: some sums overflow to +-inf */
            v[i] = (float)ldexp(g, 62);
            break;
        }
    }
}

static int same_bits(float x, float y) { return memcmp(&x, &y, sizeof x) == 0; }

static void check_scalar_definition(void)
{
    static const int64_t Ks[] = {1, 2, 15, 16, 17, 31, 33, 100, 768, 1025};
    float a[1025], b[1025];
    int bad = 0, n = 0;
    for (int f = F_GAUSS; f <= F_HUGE; f++)
        for (size_t t = 0; t < sizeof Ks / sizeof Ks[0]; t++)
            for (int rep = 0; rep < 20; rep++) {
                fill(a, Ks[t], (enum fill)f);
                fill(b, Ks[t], (enum fill)f);
                float got = mieb_canon_dot(a, b, Ks[t]), want = ref_dot(a, b, Ks[t]);
                n++;
                if (!same_bits(got, want) && !(isnan(got) && isnan(want))) {
                    if (bad++ < 5)
                        fprintf(stderr, "definition: fill %d K %lld: %a vs reference %a\n", f, (long long)Ks[t],
                                got, want);
                }
            }
    CHECK_MSG(bad == 0, "%d of %d scalar dots differ from the reference order", bad, n);
}

/* C from the active kernel against the scalar definition, element by element. */
static int compare_gemm(const char *isa, int64_t m, int64_t n, int64_t K, enum fill f)
{
    int64_t lda = K + (int64_t)(next_u64() % 3), ldb = K + (int64_t)(next_u64() % 3), ldc = n + 1;
    float *A = malloc(sizeof(float) * (size_t)(m * lda + 1)), *B = malloc(sizeof(float) * (size_t)(n * ldb + 1));
    float *C = malloc(sizeof(float) * (size_t)(m * ldc + 1));
    fill(A, m * lda, f);
    fill(B, n * ldb, f);
    for (int64_t x = 0; x < m * ldc; x++)
        C[x] = 12345.0f;
    mieb_canon_gemm(A, lda, m, B, ldb, n, K, C, ldc);
    int bad = 0;
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < n; j++) {
            float want = mieb_canon_dot(A + i * lda, B + j * ldb, K);
            if (!same_bits(C[i * ldc + j], want) && !(isnan(want) && isnan(C[i * ldc + j]))) {
                if (bad++ < 3)
                    fprintf(stderr, "%s gemm m %lld n %lld K %lld fill %d: C[%lld][%lld] = %a, scalar %a\n", isa,
                            (long long)m, (long long)n, (long long)K, f, (long long)i, (long long)j,
                            C[i * ldc + j], want);
            }
        }
        if (C[i * ldc + n] != 12345.0f) /* nothing written past n */
            bad++;
    }
    /* the row-gather variant, on a shuffled subset of B's rows */
    int32_t *rows = malloc(sizeof(int32_t) * (size_t)(n + 1));
    float *out = malloc(sizeof(float) * (size_t)(n + 1));
    for (int64_t j = 0; j < n; j++)
        rows[j] = (int32_t)(next_u64() % (uint64_t)n);
    mieb_canon_dot_rows(A, B, ldb, rows, n, K, out);
    for (int64_t j = 0; j < n; j++) {
        float want = mieb_canon_dot(A, B + (int64_t)rows[j] * ldb, K);
        if (!same_bits(out[j], want) && !(isnan(want) && isnan(out[j]))) {
            if (bad++ < 3)
                fprintf(stderr, "%s dot_rows n %lld K %lld: out[%lld] = %a, scalar %a\n", isa, (long long)n,
                        (long long)K, (long long)j, out[j], want);
        }
    }
    free(rows);
    free(out);
    free(A);
    free(B);
    free(C);
    return bad;
}

static void check_kernels(void)
{
    static const int64_t Ks[] = {1, 7, 15, 16, 17, 31, 32, 33, 47, 64, 100, 767, 768, 769};
    static const int64_t mns[][2] = {{1, 1}, {1, 5}, {3, 2}, {4, 4}, {5, 7}, {8, 12}, {9, 13}, {2, 300}, {6, 520}};
    enum mieb_canon_isa best = mieb_canon_isa_supported();
    printf("kernels this CPU runs: up to %s\n", mieb_canon_isa_name(best));
    for (int isa = MIEB_CANON_SCALAR; isa <= (int)best; isa++) {
        CHECK(mieb_canon_set_isa((enum mieb_canon_isa)isa) == 0);
        CHECK(mieb_canon_isa() == (enum mieb_canon_isa)isa);
        int bad = 0, cases = 0;
        for (size_t t = 0; t < sizeof Ks / sizeof Ks[0]; t++)
            for (size_t s = 0; s < sizeof mns / sizeof mns[0]; s++)
                for (int f = F_GAUSS; f <= F_HUGE; f++) {
                    if (mns[s][1] > 100 && Ks[t] > 100 && f != F_GAUSS)
                        continue; /* keep the big shapes to one fill */
                    bad += compare_gemm(mieb_canon_isa_name((enum mieb_canon_isa)isa), mns[s][0], mns[s][1], Ks[t],
                                        (enum fill)f);
                    cases++;
                }
        CHECK_MSG(bad == 0, "%s: %d elements differ from the scalar definition over %d cases",
                  mieb_canon_isa_name((enum mieb_canon_isa)isa), bad, cases);
    }
    CHECK(mieb_canon_set_isa((enum mieb_canon_isa)((int)best + 1)) != 0 || best == MIEB_CANON_AVX512);
    CHECK(mieb_canon_set_isa(best) == 0);
}

int main(void)
{
    check_scalar_definition();
    check_kernels();
    return check_done("test_canon_dot");
}
