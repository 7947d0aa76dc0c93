/**
 * gpu_test_util.h - seeded inputs and CPU-vs-CUDA comparisons for the GPU tests
 * (the same seeded input to both backends; exact values where the
 * arithmetic is exact, a tolerance and tie-aware id checks where it is not; print the
 * first mismatches, the largest error and the seed).
 */
#ifndef MIEB_TESTS_GPU_TEST_UTIL_H
#define MIEB_TESTS_GPU_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "cpu/cpu_backend.h"
#include "cuda_init.h"
#include "dispatch/dispatch.h"

/* ---- seeded generator (xorshift64*): the same seed gives the same inputs everywhere ---- */
/** A CUDA backend with this memory limit (0: the default) and arithmetic; NULL (reason on stderr) if none. */
struct mieb_backend *gt_cuda_new(size_t mem_limit, enum mieb_precision prec);

void gt_seed(uint64_t seed);
uint64_t gt_seed_value(void);
uint32_t gt_rand(void);

/** Values (rand % 9 - 4) / 4: every fp32 dot product of them is exact, and ties abound. */
void gt_fill_exact(float *x, int64_t n);
/** Random rows scaled to unit L2 norm (cosine inputs). */
void gt_fill_unit_rows(float *x, int64_t rows, int64_t dim);
/** offsets[0..n] with item lengths in [min_len, max_len]; returns the total rows. */
int64_t gt_make_offsets(int64_t *offsets, int64_t n, int min_len, int max_len);

/** A host vector set that owns its memory (single-vector when max_len == 0). */
struct gt_set {
    struct mieb_vecs v;
    float *data;
    int64_t *offsets;
};
/** kind 0: exact values, 1: unit rows. Multi-vector when max_len > 0. Returns 0 on OOM. */
int gt_set_make(struct gt_set *s, int64_t n, int64_t dim, int kind, int min_len, int max_len);
void gt_set_free(struct gt_set *s);

/** The similarity recomputed in double (the ground truth for tolerance checks). */
double gt_truth(const struct mieb_vecs *q, const struct mieb_vecs *d, enum mieb_sim sim, int64_t qi, int64_t di);

/* ---- checks and the summary ---- */
struct gt_tol {
    int exact;      /* 1: scores and ids must be equal */
    double atol, rtol;
    double tie_tol; /* ids may differ where the true scores differ by at most this */
};

/**
 * Compare a CUDA top-k with the CPU one: for every query the first min(k, nd) entries.
 * Returns 1 when they agree (under tol), prints the first mismatches otherwise.
 */
int gt_compare_topk(const char *name, const struct mieb_vecs *q, const struct mieb_vecs *d, enum mieb_sim sim,
                    int64_t k, const float *cpu_s, const int64_t *cpu_i, const float *gpu_s,
                    const int64_t *gpu_i, const struct gt_tol *tol);
/** Compare two score arrays element-wise under tol. */
int gt_compare_scores(const char *name, const float *cpu, const float *gpu, int64_t n, const struct gt_tol *tol);

/** Record one test's outcome (prints PASS/FAIL with the name). */
void gt_result(const char *name, int ok);
/** Print the "N passed, M failed" line; returns the exit status (0 or 1). */
int gt_summary(void);

#endif
