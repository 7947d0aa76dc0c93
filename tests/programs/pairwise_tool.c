/*
 * pairwise_tool.c - drive the Visual STS and Compositionality building blocks from
 * tests/py/test_correlation.py and tests/py/test_compositionality.py.
 *
 * One request per stdin line; every number in and out is a C99 hex float (Python's
 * float.hex / float.fromhex), so no decimal conversion blurs a last-bit difference.
 *   corr N x_1..x_N y_1..y_N        -> "<pearson> <spearman>" (pearson "nan" for N < 2)
 *   rank N x_1..x_N                 -> the N average ranks
 *   sts f32|f64 cosine|dot N D a(N*D) b(N*D)
 *                                   -> N lines "<cosine> <manhattan> <euclidean> <model>"
 *   compo DTI DTT NS NI NT D img(NS*NI*D) txt(NS*NT*D)    (DT: f32 | f16 | bf16)
 *                                   -> one line with the NS*NI*NT scores, then
 *                                      "<n> <text_ok> <image_ok> <all_ok> <image_acc> <text_acc> <accuracy>"
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_pairwise.h"
#include "metrics/compositionality.h"
#include "metrics/correlation.h"

static double rd(void)
{
    char tok[128];
    if (scanf("%127s", tok) != 1)
        exit(2);
    return strtod(tok, NULL);
}

static enum mieb_emb_dtype dtype_of(const char *s)
{
    return !strcmp(s, "f16") ? MIEB_EMB_F16 : !strcmp(s, "bf16") ? MIEB_EMB_BF16 : MIEB_EMB_F32;
}

int main(void)
{
    char op[16];
    while (scanf("%15s", op) == 1) {
        if (!strcmp(op, "corr") || !strcmp(op, "rank")) {
            long long n;
            if (scanf("%lld", &n) != 1 || n < 0)
                return 2;
            double *x = malloc(sizeof(double) * (size_t)(2 * n + 1)), *y = x + n;
            double *scratch = malloc(sizeof(double) * (size_t)(2 * n + 1));
            for (long long i = 0; i < n; i++)
                x[i] = rd();
            if (!strcmp(op, "rank")) {
                if (mieb_rankdata_average(x, n, scratch) != MIEB_OK)
                    return 3;
                for (long long i = 0; i < n; i++)
                    printf(i ? " %a" : "%a", scratch[i]);
                printf("\n");
            } else {
                for (long long i = 0; i < n; i++)
                    y[i] = rd();
                double sp;
                if (mieb_spearmanr(x, y, n, &sp) != MIEB_OK)
                    return 3;
                printf("%a %a\n", n >= 2 ? mieb_pearsonr(x, y, n, scratch) : NAN, sp);
            }
            free(x);
            free(scratch);
        } else if (!strcmp(op, "sts")) {
            char prec[8], sim[16];
            long long n, d;
            if (scanf("%7s %15s %lld %lld", prec, sim, &n, &d) != 4)
                return 2;
            float *a = malloc(sizeof(float) * (size_t)(2 * n * d + 1)), *b = a + n * d;
            double *o = malloc(sizeof(double) * (size_t)(4 * n + 1));
            for (long long i = 0; i < 2 * n * d; i++)
                a[i] = (float)rd();
            struct mieb_sts_pair_out out = {o, o + n, o + 2 * n, o + 3 * n};
            enum mieb_sim s = !strcmp(sim, "dot") ? MIEB_SIM_DOT : MIEB_SIM_COSINE;
            if (mieb_cpu_sts_pairs(a, b, n, d, !strcmp(prec, "f64"), s, &out) != MIEB_OK)
                return 3;
            for (long long i = 0; i < n; i++)
                printf("%a %a %a %a\n", o[i], o[n + i], o[2 * n + i], o[3 * n + i]);
            free(a);
            free(o);
        } else if (!strcmp(op, "compo")) {
            char dti[8], dtt[8];
            long long ns, ni, nt, d;
            if (scanf("%7s %7s %lld %lld %lld %lld", dti, dtt, &ns, &ni, &nt, &d) != 6)
                return 2;
            float *img = malloc(sizeof(float) * (size_t)(ns * (ni + nt) * d + 1)), *txt = img + ns * ni * d;
            float *s = malloc(sizeof(float) * (size_t)(ns * ni * nt + 1));
            for (long long i = 0; i < ns * (ni + nt) * d; i++)
                img[i] = (float)rd();
            if (mieb_cpu_compo_scores(img, dtype_of(dti), txt, dtype_of(dtt), ns, ni, nt, d, s) != MIEB_OK)
                return 3;
            struct mieb_compo_counts c = {0};
            for (long long k = 0; k < ns; k++)
                mieb_compo_add_sample(&c, s + k * ni * nt, ni, nt);
            for (long long i = 0; i < ns * ni * nt; i++)
                printf(i ? " %a" : "%a", (double)s[i]);
            printf("\n%lld %lld %lld %lld %a %a %a\n", (long long)c.n, (long long)c.text_ok, (long long)c.image_ok,
                   (long long)c.all_ok, mieb_compo_mean(c.image_ok, c.n), mieb_compo_mean(c.text_ok, c.n),
                   mieb_compo_mean(c.all_ok, c.n));
            free(img);
            free(s);
        } else {
            return 2;
        }
        fflush(stdout);
    }
    return 0;
}
