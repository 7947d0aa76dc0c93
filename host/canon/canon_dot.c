/* canon_dot.c - the fixed-order fp32 dot product: its scalar definition and the dispatch
   to the SIMD kernels (canon_dot_avx2.c, canon_dot_avx512.c). See canon_dot.h. */
#include "canon_dot.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/status.h"
#include "canon_kernels.h"
#include "cpu_features.h"
#include "../core/env.h"

/* The definition: 16 fma chains over k = l, l+16, l+32, ... then a fixed pairwise tree. */
float mieb_canon_dot(const float *a, const float *b, int64_t K)
{
    float acc[MIEB_CANON_LANES];
    for (int l = 0; l < MIEB_CANON_LANES; l++)
        acc[l] = 0.0f;
    for (int64_t c = 0; c < K; c += MIEB_CANON_LANES)
        for (int l = 0; l < MIEB_CANON_LANES; l++) {
            int64_t k = c + l;
            float x = k < K ? a[k] : 0.0f, y = k < K ? b[k] : 0.0f;
            acc[l] = fmaf(x, y, acc[l]);
        }
    for (int w = MIEB_CANON_LANES / 2; w >= 1; w /= 2)
        for (int l = 0; l < w; l++)
            acc[l] = acc[l] + acc[l + w];
    return acc[0];
}

static void gemm_scalar(const float *A, int64_t lda, int64_t m, const float *B, int64_t ldb, int64_t n, int64_t K,
                        float *C, int64_t ldc)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            C[i * ldc + j] = mieb_canon_dot(A + i * lda, B + j * ldb, K);
}

static void dot_rows_scalar(const float *x, const float *B, int64_t ldb, const int32_t *rows, int64_t n, int64_t K,
                            float *out)
{
    for (int64_t j = 0; j < n; j++)
        out[j] = mieb_canon_dot(x, B + (int64_t)rows[j] * ldb, K);
}

/* ---- dispatch ---- */

static enum mieb_canon_isa g_supported, g_active;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

const char *mieb_canon_isa_name(enum mieb_canon_isa isa)
{
    switch (isa) {
    case MIEB_CANON_AVX512:
        return "avx512";
    case MIEB_CANON_AVX2:
        return "avx2";
    default:
        return "scalar";
    }
}

static void decide(void)
{
    const struct mieb_cpu_features *f = mieb_cpu_features();
    g_supported = MIEB_CANON_SCALAR;
#if defined(__x86_64__)
    if (f->avx512)
        g_supported = MIEB_CANON_AVX512;
    else if (f->avx2_fma)
        g_supported = MIEB_CANON_AVX2;
#else
    (void)f;
#endif
    g_active = g_supported;
    const char *want = mieb_env(MIEB_ENV_CPU_ISA);
    if (want && *want) {
        int w = -1;
        for (int i = MIEB_CANON_SCALAR; i <= MIEB_CANON_AVX512; i++)
            if (!strcasecmp(want, mieb_canon_isa_name((enum mieb_canon_isa)i)))
                w = i;
        if (w < 0)
            MIEB_LOGW("MIEB_CPU_ISA=%s is not one of scalar, avx2, avx512; using %s", want,
                      mieb_canon_isa_name(g_active));
        else if (w > (int)g_supported)
            MIEB_LOGW("MIEB_CPU_ISA=%s: this CPU runs at most %s; using that", want, mieb_canon_isa_name(g_supported));
        else
            g_active = (enum mieb_canon_isa)w;
    }
}

enum mieb_canon_isa mieb_canon_isa_supported(void)
{
    pthread_once(&g_once, decide);
    return g_supported;
}

enum mieb_canon_isa mieb_canon_isa(void)
{
    pthread_once(&g_once, decide);
    return __atomic_load_n(&g_active, __ATOMIC_RELAXED);
}

int mieb_canon_set_isa(enum mieb_canon_isa isa)
{
    pthread_once(&g_once, decide);
    if ((int)isa < MIEB_CANON_SCALAR || isa > g_supported)
        return -1;
    __atomic_store_n(&g_active, isa, __ATOMIC_RELAXED);
    return 0;
}

void mieb_canon_gemm(const float *A, int64_t lda, int64_t m, const float *B, int64_t ldb, int64_t n, int64_t K,
                     float *C, int64_t ldc)
{
    if (m <= 0 || n <= 0)
        return;
    switch (mieb_canon_isa()) {
#if defined(__x86_64__)
    case MIEB_CANON_AVX512:
        mieb_canon_gemm_avx512(A, lda, m, B, ldb, n, K, C, ldc);
        return;
    case MIEB_CANON_AVX2:
        mieb_canon_gemm_avx2(A, lda, m, B, ldb, n, K, C, ldc);
        return;
#endif
    default:
        gemm_scalar(A, lda, m, B, ldb, n, K, C, ldc);
    }
}

void mieb_canon_dot_rows(const float *x, const float *B, int64_t ldb, const int32_t *rows, int64_t n, int64_t K,
                         float *out)
{
    if (n <= 0)
        return;
    switch (mieb_canon_isa()) {
#if defined(__x86_64__)
    case MIEB_CANON_AVX512:
        mieb_canon_dot_rows_avx512(x, B, ldb, rows, n, K, out);
        return;
    case MIEB_CANON_AVX2:
        mieb_canon_dot_rows_avx2(x, B, ldb, rows, n, K, out);
        return;
#endif
    default:
        dot_rows_scalar(x, B, ldb, rows, n, K, out);
    }
}
