/**
 * sgemm_rate.c - measure the single-precision GEMM rate of the linked BLAS for the
 * shapes mieb-eval's CPU backend uses (C = Q * D^T, row-major), and the machine's
 * FMA peak, so that the choice of BLAS / OpenBLAS core type rests on numbers.
 *
 * The same source links against OpenBLAS or BLIS: library-specific queries
 * (openblas_get_corename, bli_arch_string, thread setters) are weak symbols and the
 * program reports whichever library is present. OpenBLAS reads OPENBLAS_CORETYPE only
 * when it is loaded, so each core type is a separate run (see bench/README.md).
 *
 * Build (or use bench/CMakeLists.txt):
 *   gcc -O2 -std=gnu17 -pthread -I/usr/include/x86_64-linux-gnu/openblas-pthread \
 *       bench/sgemm_rate.c -o sgemm_rate_openblas \
 *       -L/usr/lib/x86_64-linux-gnu/openblas-pthread -lopenblas -lm
 *   gcc -O2 -std=gnu17 -pthread -I/usr/include/x86_64-linux-gnu/openblas-pthread \
 *       bench/sgemm_rate.c -o sgemm_rate_blis \
 *       -L/usr/lib/x86_64-linux-gnu/blis-openmp -lblis -lm
 * (the OpenBLAS cblas.h is used for the prototypes only; CBLAS's ABI is the same in both.)
 *
 * Usage: sgemm_rate [--threads 1,2] [--workers 2] [--shape MxNxK]... [--min-time SEC]
 *                   [--quiet PCT] [--max-wait SEC] [--attempts N] [--no-peak]
 * Default shapes: 4096x4096x768, 1024x50000x768, 256x8192x512 and 256x2048x768 (the CPU
 * backend's tile). Per shape, mode=blas rows let the BLAS thread one call (--threads
 * list); mode=workers rows run N threads of ours, each a single-threaded call on its
 * own M query rows against the shared D (--workers list; 0 = none), which is how
 * host/cpu/cpu_backend.c uses the BLAS. One "RESULT" line per (mode, threads,
 * shape), easy to grep: best and median GFLOP/s over the timed calls,
 * pct_peak = median / (threads x measured clock x 32 or 64 flop/cycle: 64 where the 512-bit
 * FMA loop shows two 512-bit pipes), pct_fma = median / the
 * FMA loop's rate at that thread count (0 with --no-peak, which skips the loop), and
 * others_pct = share of all CPUs' time used meanwhile by other processes or stolen by
 * the hypervisor. A measurement with others_pct above --quiet (default 3 %; 0 disables
 * the gating) is repeated, up to --attempts times (default 5), each after waiting up to
 * --max-wait seconds (default 120) for a quiet half second; attempts= says how many it
 * took, and a final others_pct above the limit marks a contaminated number.
 * Exit status: 0 success, 1 bad arguments or a failed allocation, 2 a numerically wrong
 * product (a broken kernel). A core type the CPU cannot run dies with SIGILL (132).
 */
#define _GNU_SOURCE
#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- library identification: weak so one binary source serves both libraries ---- */
extern char *openblas_get_corename(void) __attribute__((weak));
extern char *openblas_get_config(void) __attribute__((weak));
extern void openblas_set_num_threads(int n) __attribute__((weak));
extern const char *bli_info_get_version_str(void) __attribute__((weak));
extern int bli_arch_query_id(void) __attribute__((weak));
extern const char *bli_arch_string(int id) __attribute__((weak));
extern void bli_thread_set_num_threads(int64_t n) __attribute__((weak));

static const char *lib_name(void)
{
    if (openblas_get_config)
        return "OpenBLAS";
    if (bli_info_get_version_str)
        return "BLIS";
    return "unknown";
}

static const char *core_name(void)
{
    if (openblas_get_corename)
        return openblas_get_corename();
    if (bli_arch_query_id && bli_arch_string)
        return bli_arch_string(bli_arch_query_id());
    return "unknown";
}

static void set_threads(int n)
{
    if (openblas_set_num_threads)
        openblas_set_num_threads(n);
    if (bli_thread_set_num_threads)
        bli_thread_set_num_threads(n);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- machine peak -------------------------------------------------------------- */

/* Effective core clock: a chain of dependent 64-bit adds retires one per cycle on
 * every x86 core since the P6, so adds / second = Hz. Under KVM the nominal
 * "cpu MHz" is the TSC rate, not the boost clock the FMA units actually run at. */
static double measure_clock_hz(void)
{
    const long iters = 200000000L;
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
        uint64_t x = 0;
        double t0 = now_s();
        for (long i = 0; i < iters; i += 8) {
            /* 8 dependent adds per loop trip so the loop counter is off the critical path */
            __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
                             "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0"
                             : "+r"(x));
        }
        double hz = (double)iters / (now_s() - t0);
        if (hz > best)
            best = hz;
    }
    return best;
}

/* Sustained FMA throughput of one core on register width R ("ymm" or "zmm", LANES fp32
 * each): 12 independent accumulators cover the FMA latency on both FMA pipes. Written in asm
 * so the compiler can neither drop nor reschedule the FMAs; the assembler takes zmm whatever
 * the compile flags. */
#define FMA_PEAK_WORKER(name, R, LANES)                                                              \
    static void *name(void *arg)                                                                     \
    {                                                                                                \
        double *out = arg;                                                                           \
        const long iters = 50000000L;                                                                \
        long left = iters;                                                                           \
        double t0 = now_s();                                                                         \
        __asm__ volatile("vxorps %%" R "0, %%" R "0, %%" R "0\n\t"                                  \
                         "vmovaps %%" R "0, %%" R "1\n\tvmovaps %%" R "0, %%" R "2\n\t"              \
                         "vmovaps %%" R "0, %%" R "3\n\tvmovaps %%" R "0, %%" R "4\n\t"              \
                         "vmovaps %%" R "0, %%" R "5\n\tvmovaps %%" R "0, %%" R "6\n\t"              \
                         "vmovaps %%" R "0, %%" R "7\n\tvmovaps %%" R "0, %%" R "8\n\t"              \
                         "vmovaps %%" R "0, %%" R "9\n\tvmovaps %%" R "0, %%" R "10\n\t"             \
                         "vmovaps %%" R "0, %%" R "11\n\tvmovaps %%" R "0, %%" R "12\n\t"            \
                         "vmovaps %%" R "0, %%" R "13\n\t"                                           \
                         "1:\n\t"                                                                    \
                         "vfmadd231ps %%" R "12, %%" R "13, %%" R "0\n\t"                            \
                         "vfmadd231ps %%" R "12, %%" R "13, %%" R "1\n\t"                            \
                         "vfmadd231ps %%" R "12, %%" R "13, %%" R "2\n\t"                            \
                         "vfmadd231ps %%" R "12, %%" R "13, %%" R "3\n\t"                            \
                         "vfmadd231ps %%" R "12, %%" R "13, %%" R "4\n\t"                            \
                         "vfmadd231ps %%" R "12, %%" R "13, %%" R "5\n\t"                            \
                         "vfmadd231ps %%" R "12, %%" R "13, %%" R "6\n\t"                            \
                         "vfmadd231ps %%" R "12, %%" R "13, %%" R "7\n\t"                            \
                         "vfmadd231ps %%" R "12, %%" R "13, %%" R "8\n\t"                            \
                         "vfmadd231ps %%" R "12, %%" R "13, %%" R "9\n\t"                            \
                         "vfmadd231ps %%" R "12, %%" R "13, %%" R "10\n\t"                           \
                         "vfmadd231ps %%" R "12, %%" R "13, %%" R "11\n\t"                           \
                         "dec %0\n\t"                                                                \
                         "jnz 1b\n\t"                                                                \
                         "vzeroupper"                                                                \
                         : "+r"(left)                                                                \
                         :                                                                           \
                         : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",   \
                           "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "cc");                        \
        double dt = now_s() - t0;                                                                    \
        *out = (double)iters * 12 * (LANES) * 2 / dt; /* flop / s */                                 \
        return NULL;                                                                                 \
    }

/* AVX2: 32 fp32 flop/cycle on two 256-bit FMA pipes (Zen 3). */
FMA_PEAK_WORKER(fma_peak_worker, "ymm", 8)
/* AVX-512, where the CPU has it: 64 flop/cycle on cores with two 512-bit FMA pipes (Intel
 * Xeon, AMD Zen 5), 32 where 512-bit work is split in two halves (Zen 4). Only run where
 * __builtin_cpu_supports("avx512f"). */
FMA_PEAK_WORKER(fma512_peak_worker, "zmm", 16)

/* fp32 flop per cycle and core that pct_peak assumes: 32 (two 256-bit FMA pipes), or 64
   when the 512-bit loop shows two 512-bit pipes */
static int g_flop_cycle = 32;
static int g_fma512; /* the FMA loop runs on zmm */

static double fma_peak(int threads)
{
    pthread_t tid[64];
    double rate[64] = {0}, sum = 0;
    if (threads > 64)
        threads = 64;
    for (int t = 0; t < threads; t++)
        pthread_create(&tid[t], NULL, g_fma512 ? fma512_peak_worker : fma_peak_worker, &rate[t]);
    for (int t = 0; t < threads; t++) {
        pthread_join(tid[t], NULL);
        sum += rate[t];
    }
    return sum;
}

/* CPU time that was not ours while we measured: other processes on this machine plus
 * host-side steal (KVM). On a 2-vCPU guest one busy neighbour halves a 2-thread rate, and
 * that must not be mistaken for a slow kernel, so every RESULT line reports it and the
 * tables in bench/README.md keep only quiet samples. Jiffies (USER_HZ). */
struct cpu_sample {
    unsigned long long busy, total, self;
};

static void cpu_sample(struct cpu_sample *cs)
{
    unsigned long long v[8] = {0}, ut = 0, st = 0;
    char buf[1024];
    memset(cs, 0, sizeof *cs);
    FILE *f = fopen("/proc/stat", "r");
    if (f) {
        if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                   &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
            /* user nice system idle iowait irq softirq steal: all but idle+iowait is busy */
            cs->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
            cs->total = cs->busy + v[3] + v[4];
        }
        fclose(f);
    }
    f = fopen("/proc/self/stat", "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        /* fields after "(comm)": state ppid pgrp session tty tpgid flags minflt cminflt
         * majflt cmajflt utime stime */
        char *p = strrchr(buf, ')');
        if (p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
                        &st) == 2)
            cs->self = ut + st;
        fclose(f);
    }
}

/* Percent of all CPUs' time between two samples used by anyone but this process. */
static double others_pct(const struct cpu_sample *a, const struct cpu_sample *b)
{
    if (b->total <= a->total)
        return 0;
    double other = (double)(b->busy - a->busy) - (double)(b->self - a->self);
    return other > 0 ? 100.0 * other / (double)(b->total - a->total) : 0;
}

/* Quiet gating (--quiet PCT, --max-wait SEC, --attempts N). */
static double g_quiet_pct = 3.0, g_max_wait = 120.0;
static int g_attempts = 5;

/* Wait (up to max_wait seconds) for a 0.5 s window in which other processes used at most
 * limit % of the machine. Returns 1 when it was quiet, 0 on timeout. */
static int wait_quiet(double limit, double max_wait)
{
    double t_end = now_s() + max_wait;
    struct timespec half = {0, 500000000L};
    do {
        struct cpu_sample a, b;
        cpu_sample(&a);
        nanosleep(&half, NULL);
        cpu_sample(&b);
        if (others_pct(&a, &b) <= limit)
            return 1;
    } while (now_s() < t_end);
    return 0;
}

static double nominal_mhz(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    double mhz = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "cpu MHz : %lf", &mhz) == 1 || sscanf(line, "cpu MHz\t: %lf", &mhz) == 1)
            break;
    fclose(f);
    return mhz;
}

/* ---- GEMM timing ---------------------------------------------------------------- */

struct shape {
    int m, n, k;
};

static void fill(float *x, size_t n, uint64_t seed)
{
    /* xorshift: deterministic, fast, values in [-0.5, 0.5) like centred embeddings */
    uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        x[i] = (float)((s >> 40) * (1.0 / 16777216.0)) - 0.5f;
    }
}

/* Spot-check a few entries against a double-precision dot product; a mis-selected
 * kernel (wrong ISA, broken blocking) shows up here rather than as a fast wrong number. */
static int verify(const struct shape *s, const float *q, const float *d, const float *c)
{
    for (int t = 0; t < 16; t++) {
        int i = (int)((t * 7919L) % s->m), j = (int)((t * 104729L) % s->n);
        double ref = 0, mag = 0;
        for (int p = 0; p < s->k; p++) {
            ref += (double)q[(size_t)i * s->k + p] * d[(size_t)j * s->k + p];
            mag += fabs((double)q[(size_t)i * s->k + p] * d[(size_t)j * s->k + p]);
        }
        if (fabs(ref - c[(size_t)i * s->n + j]) > 1e-5 * mag + 1e-6) {
            fprintf(stderr, "sgemm_rate: C[%d,%d] = %g, expected %g\n", i, j,
                    c[(size_t)i * s->n + j], ref);
            return 0;
        }
    }
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Worker mode mirrors host/cpu/cpu_backend.c: our own threads, each calling a
 * single-threaded SGEMM on its own query rows against the shared documents. */
struct worker {
    pthread_t tid;
    pthread_barrier_t *start, *done;
    const struct shape *s;
    const float *q, *d;
    float *c;
    volatile int *stop;
};

static void gemm(const struct shape *s, const float *q, const float *d, float *c)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s->m, s->n, s->k, 1.0f, q, s->k, d,
                s->k, 0.0f, c, s->n);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    for (;;) {
        pthread_barrier_wait(w->start);
        if (*w->stop)
            return NULL;
        gemm(w->s, w->q, w->d, w->c);
        pthread_barrier_wait(w->done);
    }
}

/* One timed product of the shape: by the BLAS's threads (workers == 0) or by `workers`
 * threads of ours at once (each its own M rows). Returns 0 ok, 1 allocation failure,
 * 2 wrong result. */
static int run_shape(const struct shape *s, int threads, int workers, double min_time,
                     double peak_hz_core, double fma_rate_threads)
{
    int nw = workers > 0 ? workers : 1;
    size_t nq = (size_t)nw * s->m * s->k, nd = (size_t)s->n * s->k;
    size_t nc = (size_t)nw * s->m * s->n;
    float *q = aligned_alloc(64, (nq * 4 + 63) / 64 * 64);
    float *d = aligned_alloc(64, (nd * 4 + 63) / 64 * 64);
    float *c = aligned_alloc(64, (nc * 4 + 63) / 64 * 64);
    if (!q || !d || !c) {
        fprintf(stderr, "sgemm_rate: cannot allocate %dx%dx%d\n", s->m, s->n, s->k);
        free(q), free(d), free(c);
        return 1;
    }
    fill(q, nq, 1);
    fill(d, nd, 2);
    memset(c, 0, nc * 4); /* fault the pages in before timing */
    set_threads(workers > 0 ? 1 : threads);

    struct worker w[64];
    pthread_barrier_t b_start, b_done;
    volatile int stop = 0;
    if (workers > 0) {
        pthread_barrier_init(&b_start, NULL, (unsigned)nw + 1);
        pthread_barrier_init(&b_done, NULL, (unsigned)nw + 1);
        for (int i = 0; i < nw; i++) {
            w[i] = (struct worker){.start = &b_start, .done = &b_done, .s = s,
                                   .q = q + (size_t)i * s->m * s->k, .d = d,
                                   .c = c + (size_t)i * s->m * s->n, .stop = &stop};
            pthread_create(&w[i].tid, NULL, worker_main, &w[i]);
        }
    }

    double flop = 2.0 * nw * s->m * s->n * s->k, times[256], others = 0;
    int reps = 0, ok = 1, attempt = 0;
    /* Retry a measurement that other processes disturbed, after waiting for quiet: on a
     * shared 2-vCPU machine that is the only way to a number that means something. */
    while (attempt++ < g_attempts) {
        if (g_quiet_pct > 0)
            wait_quiet(g_quiet_pct, g_max_wait);
        struct cpu_sample cs0, cs1;
        reps = 0;
        /* the first call is untimed: thread start-up, buffer allocation, page faults */
        for (double t_start = 0; reps < 256 && (reps < 3 || now_s() - t_start < min_time);) {
            double t0 = now_s();
            if (workers > 0) {
                pthread_barrier_wait(&b_start);
                pthread_barrier_wait(&b_done);
            } else {
                gemm(s, q, d, c);
            }
            double dt = now_s() - t0;
            if (t_start == 0) {
                ok = verify(s, q, d, c) && verify(s, q + (size_t)(nw - 1) * s->m * s->k, d,
                                                  c + (size_t)(nw - 1) * s->m * s->n);
                cpu_sample(&cs0);
                t_start = now_s();
            } else {
                times[reps++] = dt;
            }
        }
        cpu_sample(&cs1);
        others = others_pct(&cs0, &cs1);
        if (g_quiet_pct <= 0 || others <= g_quiet_pct)
            break;
    }
    if (attempt > g_attempts)
        attempt = g_attempts;
    if (workers > 0) {
        stop = 1;
        pthread_barrier_wait(&b_start);
        for (int i = 0; i < nw; i++)
            pthread_join(w[i].tid, NULL);
        pthread_barrier_destroy(&b_start);
        pthread_barrier_destroy(&b_done);
    }

    qsort(times, (size_t)reps, sizeof times[0], cmp_double);
    double best = flop / times[0] / 1e9, med = flop / times[reps / 2] / 1e9;
    double peak_theory = nw * (workers > 0 ? 1 : threads) * peak_hz_core * g_flop_cycle / 1e9;
    printf("RESULT lib=%s core=%s mode=%s threads=%d shape=%dx%dx%d reps=%d gflops_best=%.1f "
           "gflops_median=%.1f pct_peak=%.0f pct_fma=%.0f others_pct=%.0f attempts=%d ok=%d\n",
           lib_name(), core_name(), workers > 0 ? "workers" : "blas", workers > 0 ? nw : threads,
           s->m, s->n, s->k, reps, best, med, 100 * med / peak_theory,
           fma_rate_threads > 0 ? 100 * med / (fma_rate_threads / 1e9) : 0.0, others, attempt,
           ok);
    fflush(stdout);
    free(q), free(d), free(c);
    return ok ? 0 : 2;
}

static int parse_list(char *p, int *out, int max)
{
    int n = 0;
    while (*p && n < max) {
        long v = strtol(p, &p, 10);
        if (v < 0 || v > 64)
            return -1;
        out[n++] = (int)v;
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
    }
    return n;
}

int main(int argc, char **argv)
{
    /* the three shapes of the brief, plus the CPU backend's own tile (256 x 2048) */
    struct shape shapes[16] = {
        {4096, 4096, 768}, {1024, 50000, 768}, {256, 8192, 512}, {256, 2048, 768}};
    int nshapes = 4, user_shapes = 0, do_peak = 1;
    int threads[8] = {1, 2}, nthreads = 2, workers[8] = {2}, nworkers = 1;
    double min_time = 2.0;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            if ((nthreads = parse_list(argv[++i], threads, 8)) < 0)
                goto usage;
        } else if (!strcmp(argv[i], "--workers") && i + 1 < argc) {
            if ((nworkers = parse_list(argv[++i], workers, 8)) < 0)
                goto usage;
        } else if (!strcmp(argv[i], "--shape") && i + 1 < argc) {
            if (!user_shapes)
                nshapes = 0, user_shapes = 1;
            struct shape s;
            if (nshapes >= 16 || sscanf(argv[++i], "%dx%dx%d", &s.m, &s.n, &s.k) != 3 ||
                s.m <= 0 || s.n <= 0 || s.k <= 0) {
                fprintf(stderr, "sgemm_rate: bad --shape '%s' (want MxNxK)\n", argv[i]);
                return 1;
            }
            shapes[nshapes++] = s;
        } else if (!strcmp(argv[i], "--min-time") && i + 1 < argc) {
            min_time = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--quiet") && i + 1 < argc) {
            g_quiet_pct = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--max-wait") && i + 1 < argc) {
            g_max_wait = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--attempts") && i + 1 < argc) {
            g_attempts = atoi(argv[++i]);
            if (g_attempts < 1)
                goto usage;
        } else if (!strcmp(argv[i], "--no-peak")) {
            do_peak = 0;
        } else {
            goto usage;
        }
    }

    const char *ct = getenv("OPENBLAS_CORETYPE");
    printf("# library: %s  core: %s  OPENBLAS_CORETYPE=%s\n", lib_name(), core_name(),
           ct ? ct : "(unset)");
    if (openblas_get_config)
        printf("# config: %s\n", openblas_get_config());
    if (bli_info_get_version_str)
        printf("# blis version: %s\n", bli_info_get_version_str());

    /* Theoretical peak uses the measured clock (boost), and is also shown at the
     * nominal clock; the FMA loop gives what the cores really sustain. */
    if (g_quiet_pct > 0)
        wait_quiet(g_quiet_pct, g_max_wait); /* a busy neighbour would fake a slow clock */
    double mhz = nominal_mhz(), hz = measure_clock_hz(), fma1 = 0, fma2 = 0;
    printf("# clock: nominal %.0f MHz, measured %.0f MHz\n", mhz, hz / 1e6);
    if (do_peak) {
        if (__builtin_cpu_supports("avx512f")) {
            g_fma512 = 1;
            double r = fma_peak(1);
            if (r / hz > 48) /* two 512-bit FMA pipes */
                g_flop_cycle = 64;
            else
                g_fma512 = 0; /* half-rate zmm: the ymm loop is the same rate, and the reference */
        }
        fma1 = fma_peak(1);
        fma2 = fma_peak(2);
        printf("# FMA loop (%s): 1 thread %.1f GFLOP/s, 2 threads %.1f GFLOP/s\n", g_fma512 ? "zmm" : "ymm",
               fma1 / 1e9, fma2 / 1e9);
    }
    printf("# theoretical fp32 peak (%d flop/cycle/core): 1 core %.1f GFLOP/s, 2 cores "
           "%.1f GFLOP/s (nominal clock: %.1f / %.1f)\n", g_flop_cycle,
           hz * g_flop_cycle / 1e9, 2 * hz * g_flop_cycle / 1e9, mhz * g_flop_cycle / 1e3,
           2 * mhz * g_flop_cycle / 1e3);
    fflush(stdout);

    /* pct_fma compares with the FMA loop at the same thread count: under KVM the two
     * vCPUs may share a physical core, which the loop would expose */
#define FMA_AT(n) ((n) == 1 ? fma1 : (n) == 2 ? fma2 : fma1 * (n))
    int rc = 0;
    for (int s = 0; s < nshapes; s++) {
        for (int t = 0; t < nthreads; t++) {
            int r = run_shape(&shapes[s], threads[t], 0, min_time, hz, FMA_AT(threads[t]));
            rc = r > rc ? r : rc;
        }
        for (int t = 0; t < nworkers; t++) {
            if (workers[t] <= 0)
                continue;
            int r = run_shape(&shapes[s], 1, workers[t], min_time, hz, FMA_AT(workers[t]));
            rc = r > rc ? r : rc;
        }
    }
    return rc;

usage:
    fprintf(stderr, "usage: sgemm_rate [--threads 1,2] [--workers 2] [--shape MxNxK]... "
                    "[--min-time SEC] [--quiet PCT] [--max-wait SEC] [--attempts N] "
                    "[--no-peak]\n");
    return 1;
}
