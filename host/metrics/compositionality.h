/**
 * compositionality.h - mteb's ImageTextPairClassification metrics (PROTOCOLS.md §6,
 * AbsTaskImageTextPairClassification._compute_metrics), from per-sample score matrices.
 *
 * For one sample's S [n_img, n_txt] (row i = image i):
 *   text_correct  = all_i ( argmax_j S[i, j] == i )   for i in 0 .. n_img-1
 *   image_correct = all_j ( argmax_i S[i, j] == j )   for j in 0 .. n_txt-1
 * with torch.argmax: the first maximum wins, and a NaN counts as the maximum (the first
 * NaN wins). An image index with no text of the same index (i >= n_txt) can never be
 * correct, so n_img > n_txt makes every text_correct false, and likewise n_txt > n_img
 * for image_correct (ARO and SugarCrepe: image_acc = accuracy = 0; ImageCoDe: text_acc =
 * accuracy = 0). Winoground's 2x2 case gives mteb's asymmetric rule: text_correct iff
 * S00 >= S01 and S11 > S10; image_correct iff S00 >= S10 and S11 > S01.
 *
 * The accuracies are torch float32 means of the 0/1 flags, i.e. (float)k / (float)n,
 * reported as the double of that float (0.09000000357627869 for 36/400).
 */
#ifndef MIEB_METRICS_COMPOSITIONALITY_H
#define MIEB_METRICS_COMPOSITIONALITY_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "../core/status.h"

struct mieb_compo_counts {
    int64_t n;        /* samples seen */
    int64_t text_ok;  /* samples whose every image picked its own text */
    int64_t image_ok; /* samples whose every text picked its own image */
    int64_t all_ok;   /* both */
};

/** Judge one sample's S [n_img, n_txt] (row-major) and count it. */
void mieb_compo_add_sample(struct mieb_compo_counts *c, const float *s, int64_t n_img, int64_t n_txt);

/** float32 mean of k flags out of n (torch.Tensor(flags).float().mean().item()); NaN for n == 0. */
double mieb_compo_mean(int64_t k, int64_t n);

/** Append image_acc, text_acc, accuracy (mteb's key order) to `scores`. */
mieb_status mieb_compo_finish(const struct mieb_compo_counts *c, cJSON *scores);

#endif
