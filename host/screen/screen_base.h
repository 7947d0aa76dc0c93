/**
 * screen_base.h - the screen folder's shared base, below every file of it: the bounds'
 * constants, scratch buffers and the declarations its files call across the folder:
 * screen_lists.c (bounds and candidate lists, at the bottom), the passes (screen_pass.c with screen_amx.c's AMX blocks: bf16;
 * screen_int8*.c: int8) and screen.c (kernel choice, exact rescoring, on top). Not for other
 * files (the tests excepted).
 */
#ifndef MIEB_SCREEN_SCREEN_BASE_H
#define MIEB_SCREEN_SCREEN_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "../core/status.h"

/* The bounds' rounding constants (screen_lists.c, screen.c). */
#define SCREEN_U32 (1.0 / 16777216.0)          /* 2^-24, the unit roundoff of binary32 */
#define SCREEN_MARGIN (1.0 + 1.0 / 1048576.0)  /* 1 + 2^-20: covers a few roundings of the bound's own arithmetic */

/** Grow *p (64-byte aligned, contents not kept) to hold bytes; *cap tracks its size. 0: out of memory. */
static inline int screen_reserve(void **p, size_t *cap, size_t bytes)
{
    if (*cap >= bytes)
        return 1;
    free(*p);
    *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    *cap = *p ? bytes : 0;
    return *p != NULL;
}

/**
 * A query's candidates, in increasing row order: each a document row and the bounds of its
 * exact score. The three fields are three arrays of one allocation, so that the AMX pass
 * appends up to 16 documents with three 16-lane stores and a cut scans 4-byte keys.
 */
struct screen_list {
    int32_t *idx;
    float *lb, *ub;
    int32_t n, cap;  /* entries held; room for cap + SCREEN_SLACK: an append stores 16 lanes at n, and
                        n < cut_at <= cap holds before every append (the cut restores it) */
    int32_t cut_at;  /* cut when n reaches it: early for the first cut (tau is -inf until then), then cap */
};

/** Bytes per entry (idx, lb, ub), and the room past cap that a 16-wide append may fill. */
#define SCREEN_ENTRY_BYTES 12
#define SCREEN_SLACK 16

/** A list's first capacity: room for k survivors of a cut and about 3k arrivals before the next. */
#define SCREEN_CAP0(k) (4 * (k) + 64)
/** Its first cut: every document is taken until tau exists, so tau should exist soon. */
#define SCREEN_FIRST_CUT(k) (2 * (k) + 64)

/** Elements a bf16 row copy is padded to a multiple of: one AMX tile row (64 bytes) per step of K. */
#define SCREEN_KSTEP 32

struct screen_ctx {
    int64_t m, m_pad; /* queries; padded to whole pairs of 16-query groups */
    int64_t n, K, KP, k;
    const float *Q, *D;
    /* per (padded) query: the bound is e = alpha n_d + beta rn_d + s_abs; padding has tau = +inf */
    float *alpha, *beta, *tau;
    float s_abs;
    struct screen_list *lists; /* [m] */
    unsigned char *overflow;   /* [m] */
    uint32_t hist[2048];       /* radix selection of the k-th lower bound */
    uint32_t *keys;            /* and its keys, as many as the longest list */
    int64_t keys_cap;
    size_t budget, used;       /* candidate storage allowed / in use (bytes) */
    int aborted;
};

/**
 * The list of query q reached cut_at: raise tau[q] to the k-th largest lower bound it holds, drop
 * the entries whose upper bound fell below it, and grow the list when most survive (or
 * hand the query to the exact path when the budget is spent).
 */
void mieb_screen_cut(struct screen_ctx *cx, int64_t q);
/** Hand query q to the exact path: nothing more is collected for it. */
void mieb_screen_overflow_query(struct screen_ctx *cx, int64_t q);
/** tau <- the k-th largest lb of the list, when it has k (`exact`; else the smallest value of
    the histogram bin holding it, which costs one pass less and is as good for a cut in the
    middle of the range), then keep the entries with ub >= tau. 0 when out of memory. */
int mieb_screen_tighten(struct screen_ctx *cx, int64_t q, int exact);

/** The k-th largest of lb[0..n) (1 <= k <= n); hist: 2048 counters, keys: n, scratch. */
float mieb_screen_kth_lb(const float *lb, int32_t n, int64_t k, uint32_t *hist, uint32_t *keys);

/** Give list l room for cap entries (plus the slack), keeping its n entries; 0 when out of memory. */
int mieb_screen_list_resize(struct screen_list *l, int32_t cap);

/**
 * Upper bounds of |x| and |x - bf16(x)| (the bf16 copy the matrix unit sees) for one row
 * of K floats, from fp32 sums with margins for their rounding and underflow (screen_pass.c,
 * used for queries and documents alike). Returns 0 when |x| may be beyond 2^60: past that
 * products could overflow and the bound no longer holds.
 */
int mieb_screen_norms(float ss, float rs, int64_t K, float *nrm, float *rnrm);

/** Set query q's bound coefficients from its norm bounds (screen.c). */
void mieb_screen_query_bound(struct screen_ctx *cx, int64_t q, float nrm, float rnrm);

/** The kernels that compute the approximate scores (screen_pass.c's file comment). */
enum screen_kernel {
    SCREEN_KERNEL_NONE = 0,
    SCREEN_KERNEL_AMX,        /**< TDPBF16PS on the AMX tiles */
    SCREEN_KERNEL_AVX512BF16, /**< VDPBF16PS on AVX-512 registers */
    SCREEN_KERNEL_INT8_SCALAR, /**< int8 rows, integer dot products in portable C (screen_int8.c) */
    SCREEN_KERNEL_INT8_AVX2,   /**< the same integers with AVX2's VPMADDWD (screen_int8_avx2.c) */
    SCREEN_KERNEL_INT8_VNNI512, /**< AVX512_VNNI's VPDPBUSD on ZMM registers (screen_int8_vnni512.c) */
    SCREEN_KERNEL_INT8_AVXVNNI, /**< AVX-VNNI's VPDPBUSD on YMM registers (screen_int8_avxvnni.c) */
    SCREEN_KERNEL_INT8_AMX,     /**< TDPBSSD on the AMX tiles (screen_int8_amx.c) */
};

/** 1 for the int8 kernels, whose pass is screen_int8.c's. */
#define SCREEN_KERNEL_IS_INT8(k) ((k) >= SCREEN_KERNEL_INT8_SCALAR && (k) <= SCREEN_KERNEL_INT8_AMX)

/** 1 when kern can run here (compiled in, the CPU has it, the OS lets us use it). */
int mieb_screen_kernel_usable(enum screen_kernel kern);
/** The kernel the screen uses (SCREEN_KERNEL_NONE: the screen is off). */
enum screen_kernel mieb_screen_kernel(void);
/** Tests: use kern from now on, or NONE to go back to the choice made at start
    (MIEB_CPU_SCREEN). Returns -1, changing nothing, when kern cannot run here. */
int mieb_screen_force_kernel(enum screen_kernel kern);

/* The pass (screen_pass.c): every approximate score of cx's queries and documents; each
   document whose upper bound reaches its query's tau is appended to the query's list, which
   is cut (mieb_screen_cut) when it reaches cut_at. Sets cx->aborted when a row's norm is out
   of range. Buffers live in *buf (created on first use). */
struct screen_buf;
extern const int mieb_screen_bf16_built; /* 0 where the compiler or target has no AVX512_BF16 */
mieb_status mieb_screen_pass(struct screen_ctx *cx, enum screen_kernel kern, struct screen_buf **buf);
void mieb_screen_buf_free(struct screen_buf *buf);

/** The tile configuration both AMX kernels load (LDTILECFG's 64 bytes): palette 1, every
    tile 16 rows x 64 bytes. */
struct screen_amx_cfg {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
};
static inline void screen_amx_cfg_16x64(struct screen_amx_cfg *cfg)
{
    *cfg = (struct screen_amx_cfg){.palette = 1};
    for (int t = 0; t < 8; t++) {
        cfg->colsb[t] = 64;
        cfg->rows[t] = 16;
    }
    /* gcc 12's _tile_loadconfig tells the compiler that LDTILECFG reads 8 bytes of the 64, so
       at -O2 it drops the stores above as dead and the instruction faults on the garbage
       (#GP, SIGSEGV). This empty statement reads the whole configuration: the stores stay. */
    __asm__ volatile("" : : "m"(*cfg) : "memory");
}

/* The AMX kernel (screen_amx.c): the block of 32 queries (bf16 rows a0: 16, a1: the next 16,
   KP apart) x 32 documents (VNNI groups b0, b1) into cb [32][32]; begin/end load and release
   the tile configuration around a pass on the calling thread. */
extern const int mieb_screen_amx_built; /* 0 where the compiler or target has no AMX kernel */
void mieb_screen_amx_begin(void);
void mieb_screen_amx_end(void);
void mieb_screen_amx_block(const uint16_t *a0, const uint16_t *a1, const uint16_t *b0, const uint16_t *b1,
                           int64_t KP, float *cb);

/* ---- the int8 screen (screen_int8.c; the bound: docs/SCREEN_INT8.md) ----

   Every row x (query or document) is quantised with its own scale s = max|x| / 127 to
   integers q = round(x / s) in [-127, 127], stored sign-extended as int16. A kernel then
   computes, for SCREEN_I8_MQ queries and SCREEN_I8_ND documents, the exact int32 dot
   products of the integer rows: the same integers on every machine and kernel.

   Layouts: a query is KP int16 (zeros past K); a group of SCREEN_I8_ND documents is
   [KP / 2][SCREEN_I8_ND][2] int16: pair p of 16 documents in one 64-byte row, so that a
   query's pair (32 bits) broadcast against it gives 16 documents' partial sums. AVX2's
   VPMADDWD, AVX-VNNI's and AVX512_VNNI's VPDPWSSD all read this layout as it is. */
#define SCREEN_I8_MQ 6
#define SCREEN_I8_ND 16
#define SCREEN_I8_KSTEP 4 /* KP: K rounded up to this */
/* The largest K whose integer dot products fit int32: K * 127^2 < 2^31. */
#define SCREEN_I8_MAX_K 133000 /* = MIEB_SCREEN_I8_MAX_K (math/screen_int8_math.h) */

/** out[i * SCREEN_I8_ND + j] = <query i, document j> for i < SCREEN_I8_MQ, j < SCREEN_I8_ND. */
typedef void (*screen_i8_dots_fn)(const int16_t *qa, int64_t KP, const int16_t *dv, int32_t *out);

/** What an int8 block needs to turn its integers into candidates. */
struct screen_i8_offer {
    const int32_t *dots;                 /* [SCREEN_I8_MQ][SCREEN_I8_ND] */
    int64_t q0;                          /* first query of the block */
    int nq;                              /* its real queries (<= SCREEN_I8_MQ) */
    int32_t doc0;                        /* first document row */
    int live;                            /* its real documents (<= SCREEN_I8_ND) */
    const float *sq;                     /* [m] query scales */
    const float *sd, *nd, *rnd;          /* [SCREEN_I8_ND] document scales and norm bounds */
};
typedef void (*screen_i8_offer_fn)(struct screen_ctx *cx, const struct screen_i8_offer *o);

void mieb_screen_i8_dots_scalar(const int16_t *qa, int64_t KP, const int16_t *dv, int32_t *out);
void mieb_screen_i8_offer_scalar(struct screen_ctx *cx, const struct screen_i8_offer *o);
/* screen_int8_avx2.c; 0 in mieb_screen_i8_avx2_built where the target is not x86-64 */
extern const int mieb_screen_i8_avx2_built;
void mieb_screen_i8_dots_avx2(const int16_t *qa, int64_t KP, const int16_t *dv, int32_t *out);
void mieb_screen_i8_offer_avx2(struct screen_ctx *cx, const struct screen_i8_offer *o);
/* screen_int8_offer512.c: the offer 16 documents at a time, for the kernels of CPUs with
   AVX-512 (VNNI on ZMM, AMX-INT8); 0 in mieb_screen_i8_offer512_built where not compiled */
extern const int mieb_screen_i8_offer512_built;
void mieb_screen_i8_offer_avx512(struct screen_ctx *cx, const struct screen_i8_offer *o);

/** Append document idx with [lb, ub] to query q's list, cutting it when it is full. */
void mieb_screen_append(struct screen_ctx *cx, int64_t q, int32_t idx, float lb, float ub);

/** Quantise one row (above) into KP int16 (zeros past K); returns 0 when its norm is beyond
    what the bound covers. Sets *s its scale, *nrm >= |x|, *rnrm >= |x - s q| and
    *hnrm >= |s q| (upper bounds). The sums of squares behind them are taken in 8 lanes
    (element k in lane k mod 8, one fmaf each) added pairwise (l + 4, l + 2, l + 1): both
    versions give the same bits, hence the same bounds and lists. */
typedef int (*screen_i8_quantise_fn)(const float *x, int64_t K, int64_t KP, int16_t *out, float *s, float *nrm,
                                     float *rnrm, float *hnrm);
int mieb_screen_i8_quantise(const float *x, int64_t K, int64_t KP, int16_t *out, float *s, float *nrm, float *rnrm,
                            float *hnrm);
int mieb_screen_i8_quantise_avx2(const float *x, int64_t K, int64_t KP, int16_t *out, float *s, float *nrm,
                                 float *rnrm, float *hnrm);

/** The int8 pass: every integer score of cx's queries and documents, then candidates as
    mieb_screen_pass does. */
struct screen_i8_buf;
mieb_status mieb_screen_i8_pass(struct screen_ctx *cx, enum screen_kernel kern, struct screen_i8_buf **buf);
void mieb_screen_i8_buf_free(struct screen_i8_buf *buf);

/* ---- the int8 quad layout (screen_int8_quads.c), read by VPDPBUSD and TDPBSSD ----

   A query is KQ int8 (zeros past K; KQ is K rounded up to the kernel's kstep); a group of
   SCREEN_I8_ND documents is [KQ / 4][SCREEN_I8_ND][4] int8: quad p (elements 4p .. 4p + 3)
   of 16 documents in one 64-byte row. That row is one VPDPBUSD operand on a ZMM register
   (two on YMM) and sixteen consecutive rows are one AMX B tile.

   VPDPBUSD multiplies unsigned by signed bytes, so its kernels store the documents plus 128
   (u8) and take the queries as they are: the sum it forms is I + 128 sum_k q_k, and the
   kernel subtracts 128 qsum (the query's integer sum) modulo 2^32, which gives I exactly
   whenever I fits int32 (K <= SCREEN_I8_MAX_K), whatever the intermediate sums wrapped to.
   TDPBSSD multiplies signed by signed: its documents are stored as they are. */

/** A kernel of the quad layout: out[g][i][j] = <query i, document 16 g + j> for
    i < mq, j < SCREEN_I8_ND, g < ng, where qa holds mq query rows KQ apart, dv ng groups
    of 16 documents (16 KQ bytes apart), and qsum[i] the sum of query i's integers. */
typedef void (*screen_i8q_dots_fn)(const int8_t *qa, int64_t KQ, const uint8_t *dv, const int32_t *qsum,
                                   int32_t *out);

/** Packs one document's integers into column col of a group of the quad layout. */
typedef void (*screen_i8q_pack_doc_fn)(const int16_t *q16, int64_t KP, int64_t KQ, int doc_u8, int col,
                                       uint8_t *group);

/** How the int8 pass drives a kernel: its tile, its layout and its functions. */
struct screen_i8_kernel {
    int mq;                           /* queries per call */
    int ng;                           /* groups of SCREEN_I8_ND documents per call */
    int kstep;                        /* K is padded to a multiple of this (the quad layout) */
    int doc_u8;                       /* quad layout: documents stored + 128 (VPDPBUSD) */
    screen_i8_dots_fn dots;           /* the pair layout's kernel, or NULL */
    screen_i8q_dots_fn dots_q;        /* the quad layout's kernel, or NULL */
    screen_i8_quantise_fn quantise;
    screen_i8_offer_fn offer;
    void (*begin)(void), (*end)(void); /* around a pass on the calling thread (AMX's tile configuration) */
    screen_i8q_pack_doc_fn pack_doc;  /* the quad layout's document packing; NULL: the portable one */
};
#define SCREEN_I8_MQ_MAX 32
#define SCREEN_I8_NG_MAX 2

/** The pass with kernel kd (tests drive models of kernels this CPU lacks through it). */
mieb_status mieb_screen_i8_pass_with(struct screen_ctx *cx, const struct screen_i8_kernel *kd,
                                     struct screen_i8_buf **buf);

/** Quad layout packing (screen_int8_quads.c): query rows from int16 integers (KP of them,
    zeros past K) into KQ int8 and their sum; 16 documents' rows into one group (rows past
    `live` zero). The portable kernel of the layout defines the integers every kernel of it
    must give; the test suite compares the SIMD and tile kernels' models with it. */
void mieb_screen_i8_quad_pack_query(const int16_t *q16, int64_t KP, int64_t KQ, int8_t *out, int32_t *qsum);
void mieb_screen_i8_quad_pack_doc(const int16_t *q16, int64_t KP, int64_t KQ, int doc_u8, int col, uint8_t *group);
/** The same bytes with AVX2 (screen_int8_avx2.c), for the kernels of CPUs that have it. */
void mieb_screen_i8_quad_pack_doc_avx2(const int16_t *q16, int64_t KP, int64_t KQ, int doc_u8, int col,
                                   uint8_t *group);
void mieb_screen_i8_quad_dots_scalar(const int8_t *qa, int64_t KQ, const uint8_t *dv, const int32_t *qsum,
                                 int32_t *out, int mq, int ng, int doc_u8);

/* The SIMD and tile kernels; each *_built is 0 where the compiler or target lacks it. */
extern const int mieb_screen_i8_vnni512_built, mieb_screen_i8_avxvnni_built, mieb_screen_i8_amx_built;
#define SCREEN_I8_VNNI512_MQ 12
#define SCREEN_I8_AVXVNNI_MQ 6
#define SCREEN_I8_AMX_MQ 32
#define SCREEN_I8_AMX_NG 2
#define SCREEN_I8_AMX_KSTEP 64
void mieb_screen_i8_dots_vnni512(const int8_t *qa, int64_t KQ, const uint8_t *dv, const int32_t *qsum,
                                 int32_t *out);
void mieb_screen_i8_dots_avxvnni(const int8_t *qa, int64_t KQ, const uint8_t *dv, const int32_t *qsum,
                                 int32_t *out);
void mieb_screen_i8_dots_amx(const int8_t *qa, int64_t KQ, const uint8_t *dv, const int32_t *qsum, int32_t *out);
void mieb_screen_i8_amx_begin(void);
void mieb_screen_i8_amx_end(void);

/** Tests only: scale every int8 bound by this (1 normally), or drop its rounding terms
    (the canonical sum's, the scale product's and the subnormal one), to show that the
    tests catch a bound that is too tight. */
extern float mieb_screen_i8_test_bound_scale;
extern int mieb_screen_i8_test_drop_rounding;

#endif
