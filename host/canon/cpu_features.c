/* cpu_features.c - CPUID / XCR0 detection and the Linux AMX permission; see the header. */
#include "cpu_features.h"

#include <pthread.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

static struct mieb_cpu_features g_features;
static pthread_once_t g_features_once = PTHREAD_ONCE_INIT;
static int g_amx_ok;
static pthread_once_t g_amx_once = PTHREAD_ONCE_INIT;

#if defined(__x86_64__)
static unsigned long long read_xcr0(void)
{
    unsigned int lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}
#endif

static void detect(void)
{
#if defined(__x86_64__)
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return;
    int fma = (c >> 12) & 1, osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
    if (!osxsave || !avx)
        return; /* without XSAVE enabled by the OS no wide register state is saved */
    unsigned long long xcr0 = read_xcr0();
    int ymm_os = (xcr0 & 0x6) == 0x6;          /* SSE + AVX state */
    int zmm_os = ymm_os && (xcr0 & 0xe0) == 0xe0; /* opmask, ZMM_Hi256, Hi16_ZMM */
    int tile_os = (xcr0 & (3ull << 17)) == (3ull << 17); /* XTILECFG, XTILEDATA */
    unsigned int max_leaf = __get_cpuid_max(0, NULL);
    if (max_leaf < 7)
        return;
    __cpuid_count(7, 0, a, b, c, d);
    int avx2 = (b >> 5) & 1;
    int avx512f = (b >> 16) & 1, avx512dq = (b >> 17) & 1, avx512bw = (b >> 30) & 1, avx512vl = (b >> 31) & 1;
    int amx_bf16 = (d >> 22) & 1, amx_tile = (d >> 24) & 1, amx_int8 = (d >> 25) & 1;
    int avx512_vnni = (c >> 11) & 1;
    unsigned int a1 = 0, b1, c1, d1;
    if (a >= 1) /* leaf 7's sub-leaf count */
        __cpuid_count(7, 1, a1, b1, c1, d1);
    int avx512_bf16 = (a1 >> 5) & 1, avx_vnni = (a1 >> 4) & 1;
    g_features.avx2_fma = ymm_os && avx2 && fma;
    g_features.avx512 = g_features.avx2_fma && zmm_os && avx512f && avx512dq && avx512bw && avx512vl;
    g_features.avx512_bf16 = g_features.avx512 && avx512_bf16;
    /* The AMX kernel also uses AVX512_BF16 (conversion) and AVX-512 (the bounds). */
    g_features.amx_bf16 = g_features.avx512_bf16 && amx_tile && amx_bf16 && tile_os;
    g_features.avx512_vnni = g_features.avx512 && avx512_vnni;
    g_features.avx_vnni = g_features.avx2_fma && avx_vnni;
    /* the int8 AMX kernel quantises and offers with AVX2 */
    g_features.amx_int8 = g_features.avx2_fma && amx_tile && amx_int8 && tile_os;
#endif
}

const struct mieb_cpu_features *mieb_cpu_features(void)
{
    pthread_once(&g_features_once, detect);
    return &g_features;
}

#if defined(__x86_64__) && defined(__linux__)
#define ARCH_GET_XCOMP_PERM 0x1022
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18
#endif

static void amx_request(void)
{
    if (!mieb_cpu_features()->amx_bf16 && !mieb_cpu_features()->amx_int8)
        return;
#if defined(__x86_64__) && defined(__linux__)
    /* Linux (5.16+) keeps the 8 KiB tile state off until a process asks for it; the
       permission then holds for every thread of the process. */
    if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) != 0)
        return;
    unsigned long long perm = 0;
    if (syscall(SYS_arch_prctl, ARCH_GET_XCOMP_PERM, &perm) != 0)
        return;
    g_amx_ok = (perm >> XFEATURE_XTILEDATA) & 1;
#endif
}

int mieb_cpu_amx_enable(void)
{
    pthread_once(&g_amx_once, amx_request);
    return g_amx_ok;
}
