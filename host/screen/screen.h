/**
 * screen.h - exact top-k retrieval that computes only the scores that can matter.
 *
 * The CPU backend's scores are fp32 dot products in one fixed order (canon_dot.h). For a
 * query, only the documents that can reach its best k need that score; the rest only
 * need to be proved out of reach. The screen proves it cheaply: it computes every score
 * approximately from bfloat16 copies of the rows, on the CPU's AMX matrix unit (16 times
 * the AVX-512 fp32 rate) or, without AMX, with AVX512_BF16's VDPBF16PS (twice that rate),
 * bounds the difference to the exact fp32 score rigorously for each
 * (query, document) pair from norms of the rows and of their bf16 rounding errors, and
 * keeps as candidates only the documents whose upper bound reaches the k-th largest lower
 * bound. Their exact scores (canon_dot.h, the same bits as without the screen) then give
 * exactly the best k, ties included: any document with a score at or above the k-th best
 * score has its upper bound at or above it, and the k-th largest lower bound is at most
 * the k-th best score. So the result equals the unscreened one bit for bit
 * (tests/unit/test_screen.c), on any machine, whether or not it has AMX.
 *
 * The bound, for query q, document d, their bf16 copies q', d' and r = x - x':
 *   |exact - approx| <= |r_q| |d| + |q'| |r_d| + g (|q| |d| + |q'| |d'|) + s_abs
 * with g = (K + 64) 2^-23 (twice the accumulation error of either sum, whatever order the
 * kernel adds in) and s_abs = (K + 64) 2^-125 (its flush of subnormal results and products),
 * evaluated with upward margins (screen.c). For unit vectors |r|/|x| is about 2^-9.5, so
 * the window is about +-0.003 around each approximate score: typically 1-3 % of a block's
 * documents become candidates for k = 1001 out of 50,000.
 *
 * Without AVX512_BF16 the int8 screen (screen_int8.c, docs/SCREEN_INT8.md) takes the
 * approximate scores from int8 copies of the rows instead: exact integer dot products
 * (AVX512_VNNI's or AVX-VNNI's VPDPBUSD, AVX2's VPMADDWD, AMX's TDPBSSD by name, or portable
 * C), the same on every machine and kernel, with a bound from the quantisation
 * residuals' norms (Cauchy-Schwarz), the canonical sum's rounding and the scale product's.
 * Its window is about 5x the bf16 one, and on AMD Zen 3 its integers are only twice the fp32
 * rate, so auto takes it only for blocks of at least MIEB_SCREEN_MIN_DOCS_PER_K_INT8
 * documents per k, or MIEB_SCREEN_MIN_DOCS_PER_K_INT8_FLOORED where every query has a floor.
 *
 * Environment: MIEB_CPU_SCREEN=auto (default: AMX where AMX-BF16 can be used, else
 * VDPBF16PS where AVX512_BF16 can, else int8 with the fastest of VNNI512, AVX-VNNI and AVX2
 * where it pays) | off | amx | avx512bf16 | int8 (that fastest int8 kernel, or portable C
 * without AVX2) | int8-amx | int8-vnni512 | int8-avxvnni | int8-avx2 | int8-scalar (that
 * kernel; where it cannot run, a warning and auto).
 */
#ifndef MIEB_SCREEN_SCREEN_H
#define MIEB_SCREEN_SCREEN_H

#include <stddef.h>
#include <stdint.h>

#include "../core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** 1 when the screen runs on this machine (AMX-BF16 with Linux's permission, AVX512_BF16,
    or the int8 kernels; not switched off). */
int mieb_screen_available(void);
/** "amx", "avx512bf16", "int8-amx", "int8-vnni512", "int8-avxvnni", "int8-avx2",
    "int8-scalar" or "off": what the screen runs on (for logs and benchmarks). */
const char *mieb_screen_kernel_name(void);
/** The same for a block whose queries all have floors (floored = 1) or not: under auto a
    CPU with AVX512_BF16 and AVX512_VNNI but no AMX screens floored blocks with int8-vnni512. */
const char *mieb_screen_kernel_name_for(int floored);
/** Switch the screen off (0) or back to auto (1), for tests and benchmarks. */
void mieb_screen_set_enabled(int on);

/** The smallest block, and the largest k relative to it, for which the screen pays: with
    AMX, and with VDPBF16PS, whose approximate scores cost a third of the exact ones (not a
    sixteenth), so that the candidates' rescoring (at least k of the block) must be a
    smaller share (docs/DESIGN.md, where the bf16 screen pays: even at 20 documents per k). */
#define MIEB_SCREEN_MIN_DOCS 2048
#define MIEB_SCREEN_MIN_DOCS_PER_K 8
#define MIEB_SCREEN_MIN_DOCS_PER_K_AVX512BF16 40
/** The int8 screen (AVX2) under auto: its window is about 5x the bf16 one, so 2-5 % of a
    block are rescored besides the k, and its integer products are only twice the fp32
    rate; on AMD Zen 3 it pays from about 200 documents per k (docs/SCREEN_INT8.md,
    section 10), so mteb's 50,000-document chunks at k = 1001 stay on the exact way.
    MIEB_CPU_SCREEN=int8 runs it from MIEB_SCREEN_MIN_DOCS_PER_K. */
#define MIEB_SCREEN_MIN_DOCS_PER_K_INT8 200
/** The int8 screen once every query of the block has a floor (its running top k is full, from
    the second of mteb's chunks on): tau starts at the floor, so fewer documents are listed and
    rescored. On Zen 3 a 50,000-document chunk at k = 1,001 (50 per k) then takes 0.93 of the
    exact way's time as the second chunk and 0.75 on average over the second to the eighth,
    where a first chunk takes 1.28 (docs/SCREEN_INT8.md, section 10). */
#define MIEB_SCREEN_MIN_DOCS_PER_K_INT8_FLOORED 40

/** 1 when floor (NULL: none) gives every one of n queries a finite floor (none is NaN, "no
    floor", or -inf, "not yet full"): the `floored` of the functions below. */
int mieb_screen_all_floored(const float *floor, int64_t n);

/** 1 when the screen is available and pays for a block of n_docs documents and best k;
    floored: every query of the block has a floor (a finite one). */
int mieb_screen_pays(int64_t n_docs, int64_t k, int floored);

/** Bytes of scratch one query of a screened job needs at dimension K and best k. */
size_t mieb_screen_bytes_per_query(int64_t K, int64_t k);

/** What a screened job did (summed into the caller's debug line). */
struct mieb_screen_stats {
    int64_t pairs;      /**< (query, document) pairs screened */
    int64_t candidates; /**< of those, exact scores computed */
    int64_t overflowed; /**< queries handed back for the exact path (too many candidates) */
    int64_t aborted;    /**< jobs handed back whole (a norm beyond 2^60) */
    const char *kernel; /**< the kernel that screened (mieb_screen_kernel_name's names), or NULL */
};

struct mieb_screen_scratch; /**< per-thread buffers, reused across calls */
void mieb_screen_scratch_free(struct mieb_screen_scratch *s);

/**
 * Best k of each of m queries Q [m, K] against n documents D [n, K] (row-major, rows K
 * floats apart), as the exact path gives them: out_s/out_i + q*k hold min(k, n) entries,
 * score descending then index ascending, indices base + row; out_n[q] the count.
 *
 * floor (NULL: none) [m]: query q needs only the documents scoring >= floor[q]. Its list
 * then equals the exact path's in every entry scoring >= floor[q]; entries below it may
 * follow (the caller drops them). The floor starts the query's tau: documents whose upper
 * bound is below it are refused from the start, which makes later corpus blocks of a
 * search cheap once its running top-k is full.
 *
 * Queries whose candidates would outgrow `budget` bytes are not scored: they are listed in
 * overflow[0 .. *n_overflow) for the caller's exact path. *aborted = 1 (nothing scored)
 * when a row's norm is beyond what the bound covers (2^60). *sc is created on first use.
 */
mieb_status mieb_screen_topk(struct mieb_screen_scratch **sc, const float *Q, int64_t m, const float *D,
                             int64_t n, int64_t K, int64_t k, int64_t base, const float *floor, size_t budget,
                             float *out_s,
                             int64_t *out_i, int64_t *out_n, int64_t *overflow, int64_t *n_overflow, int *aborted,
                             struct mieb_screen_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
