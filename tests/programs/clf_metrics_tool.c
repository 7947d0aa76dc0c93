/*
 * clf_metrics_tool.c - test driver for host/metrics/classification_metrics.c.
 * stdin: n, then n lines "y_true y_pred score"; stdout: the nine metrics, one per line as
 * %.17g ("None" for ap when y_true does not have exactly two classes, "ERR <msg>" on error).
 * tests/py/test_clf_metrics.py compares them with sklearn.metrics.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/status.h"
#include "metrics/classification_metrics.h"

int main(void)
{
    long long n;
    if (scanf("%lld", &n) != 1 || n <= 0)
        return 2;
    int64_t *t = malloc((size_t)n * sizeof *t), *p = malloc((size_t)n * sizeof *p);
    double *s = malloc((size_t)n * sizeof *s);
    if (!t || !p || !s)
        return 2;
    for (long long i = 0; i < n; i++)
        if (scanf("%" SCNd64 " %" SCNd64 " %lf", &t[i], &p[i], &s[i]) != 3)
            return 2;
    struct mieb_clf_scores sc;
    if (mieb_clf_label_metrics(t, p, n, &sc) != MIEB_OK) {
        printf("ERR %s\n", mieb_last_error());
        return 1;
    }
    int64_t nu;
    if (mieb_clf_n_unique(t, n, &nu) != MIEB_OK)
        return 1;
    for (int i = 0; i < 7; i++)
        printf("%.17g\n", mieb_clf_scores_value(&sc, i));
    if (nu == 2) {
        double ap;
        if (mieb_clf_binary_ap(t, s, n, &ap) != MIEB_OK)
            printf("ERR %s\n", mieb_last_error());
        else
            printf("%.17g\n", ap);
    } else {
        printf("None\n");
    }
    free(t), free(p), free(s);
    return 0;
}
