/**
 * canon_scores.c - mieb-eval's CPU cosine scores of two raw float32 matrices, for the
 * rounding analysis of bench/xm3600_rounding.py.
 *
 * Rows are L2-normalised as the retrieval family does (mieb_cpu_l2_normalize_rows), unless
 * --prenormalised, then every query x document score is mieb_canon_gemm's fixed summation
 * order (host/canon/canon_dot.h): the bits `mieb-eval run` ranks by on the CPU.
 *
 *   canon_scores Q.f32 D.f32 nq nd dim SCORES.f32 NORMALISED.f32 [--prenormalised]
 *
 * SCORES.f32 gets nq x nd float32 scores (row-major); NORMALISED.f32 the normalised query
 * rows followed by the normalised document rows.
 *
 *   cmake --build build --target canon_scores   (binary: build/bench/canon_scores)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../host/canon/canon_dot.h"
#include "../host/cpu/cpu_kernels.h"

static float *read_f32(const char *path, size_t n)
{
    FILE *f = fopen(path, "rb");
    float *x = f ? malloc(n * sizeof *x) : NULL;
    if (!x || fread(x, sizeof *x, n, f) != n) {
        fprintf(stderr, "canon_scores: cannot read %zu floats from %s\n", n, path);
        exit(1);
    }
    fclose(f);
    return x;
}

static void write_f32(const char *path, const float *a, size_t na, const float *b, size_t nb)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(a, sizeof *a, na, f) != na || (nb && fwrite(b, sizeof *b, nb, f) != nb) || fclose(f)) {
        fprintf(stderr, "canon_scores: cannot write %s\n", path);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 8 && !(argc == 9 && !strcmp(argv[8], "--prenormalised"))) {
        fprintf(stderr, "usage: canon_scores Q.f32 D.f32 nq nd dim SCORES.f32 NORMALISED.f32 [--prenormalised]\n");
        return 2;
    }
    int64_t nq = atoll(argv[3]), nd = atoll(argv[4]), dim = atoll(argv[5]);
    if (nq <= 0 || nd <= 0 || dim <= 0) {
        fprintf(stderr, "canon_scores: nq, nd and dim must be positive\n");
        return 2;
    }
    float *q = read_f32(argv[1], (size_t)(nq * dim)), *d = read_f32(argv[2], (size_t)(nd * dim));
    if (argc == 8) {
        mieb_cpu_l2_normalize_rows(q, nq, dim);
        mieb_cpu_l2_normalize_rows(d, nd, dim);
    }
    float *s = malloc((size_t)(nq * nd) * sizeof *s);
    if (!s) {
        fprintf(stderr, "canon_scores: out of memory\n");
        return 1;
    }
    mieb_canon_gemm(q, dim, nq, d, dim, nd, dim, s, nd);
    write_f32(argv[6], s, (size_t)(nq * nd), NULL, 0);
    write_f32(argv[7], q, (size_t)(nq * dim), d, (size_t)(nd * dim));
    free(s), free(q), free(d);
    return 0;
}
