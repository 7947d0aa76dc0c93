/**
 * fewshot_sample.h - mteb 2.26's few-shot draw for the linear probe (PROTOCOLS.md §2.2, §9.1),
 * AbsTaskClassification._undersample_data as _evaluate_subset calls it:
 *
 *   idxs = list(range(n_train))                     # one list, shared by the experiments
 *   for e in range(n_experiments):
 *       np.random.RandomState(42).shuffle(idxs)     # a NEW RandomState(42) each time
 *       counter = defaultdict(int); sel_e = []
 *       for i in idxs:
 *           if counter[label[i]] < samples_per_label: sel_e.append(i); counter[label[i]] += 1
 *
 * A legacy shuffle of a list is Fisher-Yates (i = n-1 .. 1, j = random_interval(i)); the
 * swaps do not depend on the contents, so every call applies the same permutation sigma
 * (new[i] = old[sigma[i]]) and experiment e sees the list permuted e+1 times. A class with
 * fewer than samples_per_label rows contributes all of them, so every experiment selects
 * the same number of rows, sum over classes of min(count, samples_per_label).
 */
#ifndef MIEB_EMULATION_FEWSHOT_SAMPLE_H
#define MIEB_EMULATION_FEWSHOT_SAMPLE_H

#include <stdint.h>

#include "../core/status.h"

/** sigma for n items: the list range(n) after np.random.RandomState(seed).shuffle. out[n]. */
void mieb_fewshot_shuffle_perm(uint32_t seed, int64_t n, int64_t *out);

/**
 * The selections of all experiments. labels[n_train] are arbitrary int64 class ids.
 * On success *sel is malloc'd [n_experiments * *per_exp] (experiment-major; each row is
 * the selected train rows in selection order) and *per_exp is the row length (the same
 * for every experiment). n_train >= 1, samples_per_label >= 1, n_experiments >= 1, else
 * MIEB_ERR_INVALID_ARG. Fails otherwise only on allocation.
 */
mieb_status mieb_fewshot_draw(const int64_t *labels, int64_t n_train, int64_t samples_per_label,
                              int64_t n_experiments, int64_t **sel, int64_t *per_exp);

/**
 * Sorted distinct values of a[n] into *uniq (malloc'd, *n_uniq entries) and, when idx is not
 * NULL, idx[i] = position of a[i] in *uniq (sklearn's LabelEncoder). n >= 0.
 */
mieb_status mieb_fewshot_encode(const int64_t *a, int64_t n, int64_t **uniq, int64_t *n_uniq, int64_t *idx);

#endif
