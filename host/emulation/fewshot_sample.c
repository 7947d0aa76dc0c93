/* fewshot_sample.c - mteb's few-shot draw for the linear probe (see fewshot_sample.h). */
#include "fewshot_sample.h"

#include <stdlib.h>
#include <string.h>

#include "np_randomstate.h"
#include "../core/qsort_cmp.h"

void mieb_fewshot_shuffle_perm(uint32_t seed, int64_t n, int64_t *out)
{
    struct mieb_rs rs;
    mieb_rs_seed(&rs, seed);
    for (int64_t i = 0; i < n; i++)
        out[i] = i;
    /* numpy legacy shuffle of a Python list: for i in reversed(range(1, n)): j = random_interval(i) */
    for (int64_t i = n - 1; i >= 1; i--) {
        int64_t j = (int64_t)mieb_rs_interval(&rs, (uint64_t)i);
        int64_t t = out[i];
        out[i] = out[j];
        out[j] = t;
    }
}

/* position of v in the sorted array u[m] (v is known to be present) */
static int64_t find_sorted(const int64_t *u, int64_t m, int64_t v)
{
    int64_t lo = 0, hi = m - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (u[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

mieb_status mieb_fewshot_encode(const int64_t *a, int64_t n, int64_t **uniq, int64_t *n_uniq, int64_t *idx)
{
    int64_t *u = malloc((size_t)(n > 0 ? n : 1) * sizeof *u);
    if (!u)
        return mieb_fail(MIEB_ERR_OOM, "label encoding of %lld labels", (long long)n);
    if (n > 0)
        memcpy(u, a, (size_t)n * sizeof *u);
    qsort(u, (size_t)n, sizeof *u, mieb_cmp_i64);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (m == 0 || u[i] != u[m - 1])
            u[m++] = u[i];
    if (idx)
        for (int64_t i = 0; i < n; i++)
            idx[i] = find_sorted(u, m, a[i]);
    *uniq = u;
    *n_uniq = m;
    return MIEB_OK;
}

mieb_status mieb_fewshot_draw(const int64_t *labels, int64_t n_train, int64_t samples_per_label,
                              int64_t n_experiments, int64_t **sel, int64_t *per_exp)
{
    *sel = NULL;
    *per_exp = 0;
    if (n_train < 1 || samples_per_label < 1 || n_experiments < 1)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "few-shot draw: n_train %lld, samples_per_label %lld, n_experiments %lld",
                         (long long)n_train, (long long)samples_per_label, (long long)n_experiments);
    int64_t *cls = malloc((size_t)n_train * sizeof *cls), *uniq = NULL, k = 0;
    int64_t *sigma = malloc((size_t)n_train * sizeof *sigma), *idxs = malloc((size_t)n_train * sizeof *idxs);
    int64_t *tmp = malloc((size_t)n_train * sizeof *tmp), *counter = NULL, *out = NULL;
    mieb_status st = (cls && sigma && idxs && tmp) ? MIEB_OK : mieb_fail(MIEB_ERR_OOM, "few-shot draw of %lld rows", (long long)n_train);
    if (st == MIEB_OK)
        st = mieb_fewshot_encode(labels, n_train, &uniq, &k, cls);
    if (st != MIEB_OK)
        goto done;
    counter = calloc((size_t)k, sizeof *counter);
    if (!counter) {
        st = mieb_fail(MIEB_ERR_OOM, "few-shot draw counters");
        goto done;
    }
    /* the row length: min(count, samples_per_label) per class, the same in every experiment */
    for (int64_t i = 0; i < n_train; i++)
        counter[cls[i]]++;
    int64_t L = 0;
    for (int64_t c = 0; c < k; c++)
        L += counter[c] < samples_per_label ? counter[c] : samples_per_label;
    out = malloc((size_t)(n_experiments * L) * sizeof *out);
    if (!out) {
        st = mieb_fail(MIEB_ERR_OOM, "few-shot selections %lld x %lld", (long long)n_experiments, (long long)L);
        goto done;
    }
    mieb_fewshot_shuffle_perm(42, n_train, sigma);
    for (int64_t i = 0; i < n_train; i++)
        idxs[i] = i;
    for (int64_t e = 0; e < n_experiments; e++) {
        for (int64_t i = 0; i < n_train; i++) /* rs.shuffle(idxs): new[i] = old[sigma[i]] */
            tmp[i] = idxs[sigma[i]];
        memcpy(idxs, tmp, (size_t)n_train * sizeof *idxs);
        memset(counter, 0, (size_t)k * sizeof *counter);
        int64_t m = 0;
        for (int64_t i = 0; i < n_train; i++) {
            int64_t c = cls[idxs[i]];
            if (counter[c] < samples_per_label) {
                out[e * L + m++] = idxs[i];
                counter[c]++;
            }
        }
        if (m != L) {
            st = mieb_fail(MIEB_ERR_INTERNAL, "few-shot draw: experiment %lld selected %lld rows, expected %lld",
                           (long long)e, (long long)m, (long long)L);
            goto done;
        }
    }
    *sel = out;
    *per_exp = L;
    out = NULL;
done:
    free(cls), free(uniq), free(sigma), free(idxs), free(tmp), free(counter), free(out);
    return st;
}
