/* report_sections.c - report sections read from whole result files: linear-probe spread,
   recall@k curves, per-language scores and time per stage (see report_sections.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_data.h"
#include "report_heatmap.h"
#include "report_sections.h"

#define MAX_EXP 256 /* experiments per result read for the spread chart */
#define MAX_K 32    /* recall@k points per curve */

void mieb_report_probe(struct mieb_report_ctx *c)
{
    const struct mieb_leaderboard *lb = c->lb;
    const int nm = lb->n_models;
    const char **groups = calloc((size_t)lb->n_tasks + 1, sizeof *groups);
    int *task_of = calloc((size_t)lb->n_tasks + 1, sizeof *task_of), ng = 0;
    double probe[MAX_EXP];
    mieb_html_fmt(c->h, "<h2 id=\"probe\">Linear probe: spread across experiments</h2>\n");
    if (!groups || !task_of) {
        c->h->st = mieb_fail(MIEB_ERR_OOM, "report");
        goto out;
    }
    for (int t = 0; t < lb->n_tasks; t++) /* the tasks with scores_per_experiment in some model */
        for (int p = 0; p < nm; p++)
            if (mieb_report_data_experiments(mieb_report_doc(c, p, t), lb->tasks[t]->main_score, probe, MAX_EXP) > 0) {
                groups[ng] = lb->tasks[t]->name;
                task_of[ng++] = t;
                break;
            }
    if (!ng) {
        mieb_html_fmt(c->h, "<p class=\"note\">No result has scores_per_experiment.</p>\n");
        goto out;
    }
    int *n_vals = calloc((size_t)nm * ng, sizeof *n_vals);
    double **vals = calloc((size_t)nm * ng, sizeof *vals);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; n_vals && vals && i < (size_t)nm * ng; i++) {
        int p = (int)(i / ng), g = (int)(i % ng);
        vals[i] = malloc(MAX_EXP * sizeof **vals);
        if (!vals[i])
            break;
        n_vals[i] = mieb_report_data_experiments(mieb_report_doc(c, p, task_of[g]), lb->tasks[task_of[g]]->main_score,
                                        vals[i], MAX_EXP);
        for (int j = 0; j < n_vals[i]; j++) {
            lo = fmin(lo, vals[i][j]);
            hi = fmax(hi, vals[i][j]);
        }
    }
    if (!n_vals || !vals || !vals[(size_t)nm * ng - 1]) {
        c->h->st = mieb_fail(MIEB_ERR_OOM, "report");
    } else {
        /* the axis fits the values (to 0.05) so that small spreads stay visible */
        double vmin = floor(lo * 20.0 - 1e-9) / 20.0, vmax = ceil(hi * 20.0 + 1e-9) / 20.0;
        mieb_html_fmt(c->h, "<p class=\"note\">The task&#39;s main metric in each experiment (dots), their range "
                            "(line) and mean (tick), 100 &#215; score. The axis does not start at 0.</p>\n");
        mieb_report_legend(c);
        mieb_html_fmt(c->h, "<div class=\"card\">\n");
        struct mieb_svg_spread sp = {.id = "probe-spread", .n_groups = ng, .groups = groups, .n_series = nm,
                                     .series = c->series, .n_vals = n_vals, .vals = (const double *const *)vals,
                                     .vmin = vmin, .vmax = vmax, .mul = 100.0};
        mieb_svg_spread(c->h, &sp);
        mieb_html_fmt(c->h, "</div>\n");
    }
    for (size_t i = 0; vals && i < (size_t)nm * ng; i++)
        free(vals[i]);
    free(vals);
    free(n_vals);
out:
    free(groups);
    free(task_of);
}

void mieb_report_recall(struct mieb_report_ctx *c)
{
    const struct mieb_leaderboard *lb = c->lb;
    const int nm = lb->n_models;
    double k[MAX_K], v[MAX_K], x[MAX_K];
    double *y = malloc(((size_t)nm * MAX_K + 1) * sizeof *y);
    char id[300];
    int shown = 0;
    mieb_html_fmt(c->h, "<h2 id=\"recall\">Retrieval: recall@k</h2>\n<p class=\"note\">recall_at_k (100 &#215; "
                        "score) against k on a log scale, averaged over a task's splits and subsets.</p>\n");
    if (!y) {
        c->h->st = mieb_fail(MIEB_ERR_OOM, "report");
        return;
    }
    mieb_report_legend(c);
    for (int t = 0; t < lb->n_tasks; t++) {
        int nx = 0;
        for (int p = 0; p < nm; p++) { /* the union of the k values, increasing */
            int n = mieb_report_data_recall_curve(mieb_report_doc(c, p, t), k, v, MAX_K);
            for (int i = 0; i < n; i++) {
                int j = 0;
                while (j < nx && x[j] < k[i])
                    j++;
                if ((j < nx && x[j] == k[i]) || nx == MAX_K)
                    continue;
                memmove(x + j + 1, x + j, (size_t)(nx - j) * sizeof *x);
                x[j] = k[i];
                nx++;
            }
        }
        if (!nx)
            continue;
        for (int p = 0; p < nm; p++) {
            int n = mieb_report_data_recall_curve(mieb_report_doc(c, p, t), k, v, MAX_K);
            for (int j = 0; j < nx; j++) {
                y[(size_t)p * nx + j] = NAN;
                for (int i = 0; i < n; i++)
                    if (k[i] == x[j])
                        y[(size_t)p * nx + j] = v[i];
            }
        }
        if (!shown++)
            mieb_html_fmt(c->h, "<div class=\"grid\">\n");
        snprintf(id, sizeof id, "recall-%s", lb->tasks[t]->name);
        mieb_html_fmt(c->h, "<div class=\"card\">\n");
        struct mieb_svg_lines ln = {.id = id, .title = lb->tasks[t]->name, .n_x = nx, .x = x, .n_series = nm,
                                    .series = c->series, .v = y, .vmin = 0.0, .vmax = 1.0, .mul = 100.0};
        mieb_svg_lines(c->h, &ln);
        mieb_html_fmt(c->h, "</div>\n");
    }
    if (shown)
        mieb_html_fmt(c->h, "</div>\n");
    else
        mieb_html_fmt(c->h, "<p class=\"note\">No result has recall_at_k scores.</p>\n");
    free(y);
}

/* The (split, subset) pairs of a multilingual task across the models, in order of first appearance. */
struct pairs {
    int n, cap;
    const char **split, **subset;
};

static bool pairs_add(struct pairs *ps, const char *split, const char *subset)
{
    for (int i = 0; i < ps->n; i++)
        if (!strcmp(ps->split[i], split) && !strcmp(ps->subset[i], subset))
            return true;
    if (ps->n == ps->cap) {
        int nc = ps->cap ? 2 * ps->cap : 64;
        const char **a = realloc(ps->split, (size_t)nc * sizeof *a);
        if (a)
            ps->split = a;
        const char **b = realloc(ps->subset, (size_t)nc * sizeof *b);
        if (b)
            ps->subset = b;
        if (!a || !b)
            return false;
        ps->cap = nc;
    }
    ps->split[ps->n] = split;
    ps->subset[ps->n++] = subset;
    return true;
}

/* Many models: a task's subsets as heatmap rows (v: [model position][subset]). False: out of memory. */
static bool language_heatmap(struct mieb_report_ctx *c, int t, const char *id, int n, const char *const *labels,
                             const double *v)
{
    const int nm = c->lb->n_models;
    struct mieb_heat_row *rows = calloc((size_t)n + 1, sizeof *rows);
    double *by_subset = malloc(((size_t)n * nm + 1) * sizeof *by_subset);
    if (rows && by_subset) {
        for (int i = 0; i < n; i++) {
            for (int p = 0; p < nm; p++)
                by_subset[(size_t)i * nm + p] = v[(size_t)p * n + i];
            rows[i] = (struct mieb_heat_row){labels[i], by_subset + (size_t)i * nm, 0};
        }
        mieb_html_fmt(c->h, "<h3>%s</h3>\n", c->lb->tasks[t]->name);
        mieb_report_heatmap(c, id, rows, n);
    }
    bool ok = rows && by_subset;
    free(rows);
    free(by_subset);
    return ok;
}

static mieb_status language_chart(struct mieb_report_ctx *c, int t)
{
    const struct mieb_leaderboard *lb = c->lb;
    const int nm = lb->n_models;
    struct pairs ps = {0};
    bool ok = true;
    for (int p = 0; p < nm; p++) {
        const cJSON *scores = cJSON_GetObjectItemCaseSensitive(mieb_report_doc(c, p, t), "scores"), *sp, *e;
        cJSON_ArrayForEach(sp, (cJSON_IsObject(scores) ? scores : NULL))
        cJSON_ArrayForEach(e, (cJSON_IsArray(sp) ? sp : NULL))
        {
            const cJSON *sub = cJSON_GetObjectItemCaseSensitive(e, "hf_subset");
            if (cJSON_IsString(sub) && sp->string)
                ok &= pairs_add(&ps, sp->string, sub->valuestring);
        }
    }
    bool many_splits = false;
    for (int i = 1; i < ps.n; i++)
        many_splits |= strcmp(ps.split[i], ps.split[0]) != 0;
    char **labels = calloc((size_t)ps.n + 1, sizeof *labels);
    double *v = malloc(((size_t)nm * ps.n + 1) * sizeof *v);
    char id[300];
    if (!ok || !labels || !v) {
        ok = false;
        goto out;
    }
    for (int i = 0; i < ps.n; i++) {
        char langs[512] = "", lab[700];
        for (int p = 0; p < nm; p++) {
            char l[512];
            v[(size_t)p * ps.n + i] = mieb_report_data_subset_score(mieb_report_doc(c, p, t), ps.split[i], ps.subset[i], l,
                                                           sizeof l);
            if (!langs[0])
                snprintf(langs, sizeof langs, "%s", l);
        }
        /* the subset, its language when it names one other than itself, the split when there are several */
        snprintf(lab, sizeof lab, "%s%s%s%s%s", many_splits ? ps.split[i] : "", many_splits ? "/" : "", ps.subset[i],
                 langs[0] && !strchr(langs, ',') && strcmp(langs, ps.subset[i]) ? " " : "",
                 langs[0] && !strchr(langs, ',') && strcmp(langs, ps.subset[i]) ? langs : "");
        if (!(labels[i] = strdup(lab))) {
            ok = false;
            goto out;
        }
    }
    double lo = 0.0;
    for (size_t i = 0; i < (size_t)nm * ps.n; i++)
        lo = fmin(lo, isnan(v[i]) ? 0.0 : v[i]);
    snprintf(id, sizeof id, "lang-%s", lb->tasks[t]->name);
    if (nm > MIEB_REPORT_MAX_GROUPED) {
        ok = language_heatmap(c, t, id, ps.n, (const char *const *)labels, v);
        goto out;
    }
    mieb_html_fmt(c->h, "<div class=\"card\"><h3>%s</h3>\n", lb->tasks[t]->name);
    struct mieb_svg_bars bars = {.id = id, .horizontal = 0, .n_groups = ps.n, .groups = (const char *const *)labels,
                                 .n_series = nm, .series = c->series, .v = v,
                                 .vmin = lo < 0 ? floor(lo * 10.0) / 10.0 : 0.0, .vmax = 1.0, .mul = 100.0,
                                 .decimals = 2};
    mieb_svg_bars(c->h, &bars);
    mieb_html_fmt(c->h, "</div>\n");
out:
    for (int i = 0; labels && i < ps.n; i++)
        free(labels[i]);
    free(labels);
    free(v);
    free(ps.split);
    free(ps.subset);
    return ok ? MIEB_OK : mieb_fail(MIEB_ERR_OOM, "report");
}

void mieb_report_languages(struct mieb_report_ctx *c)
{
    const struct mieb_leaderboard *lb = c->lb;
    int shown = 0;
    mieb_html_fmt(c->h, "<h2 id=\"languages\">Multilingual tasks: score per language</h2>\n<p class=\"note\">Main "
                        "score of each hf_subset (100 &#215; score), for the tasks whose results hold more than one "
                        "subset in a split.</p>\n");
    for (int t = 0; t < lb->n_tasks && c->h->st == MIEB_OK; t++) {
        bool multi = false;
        for (int p = 0; p < lb->n_models; p++)
            multi |= mieb_report_data_multi_subset(mieb_report_doc(c, p, t));
        if (!multi)
            continue;
        if (!shown++ && lb->n_models <= MIEB_REPORT_MAX_GROUPED)
            mieb_report_legend(c);
        mieb_status st = language_chart(c, t);
        if (st != MIEB_OK)
            c->h->st = st;
    }
    if (!shown)
        mieb_html_fmt(c->h, "<p class=\"note\">No multilingual task in these results.</p>\n");
}

/* Stage colours: distinct from each other and from the models' colours, grey for the two derived segments. */
static const char *const STAGE_COLORS[] = {"#8cd17d", "#a0cbe8", "#f1ce63", "#d37295", "#499894",
                                           "#b6992d", "#fabfd2", "#86bcb6", "#d4a6c8", "#9d7660"};

mieb_status mieb_report_time(struct mieb_report_ctx *c)
{
    const struct mieb_leaderboard *lb = c->lb;
    const int nm = lb->n_models, nt = lb->n_tasks;
    struct mieb_report_data_segs segs = {0};
    mieb_status st = MIEB_OK;
    for (size_t i = 0; i < (size_t)nm * nt && st == MIEB_OK; i++)
        st = mieb_report_data_segs_collect(&segs, c->docs[i]);
    if (st == MIEB_OK)
        st = mieb_report_data_segs_finish(&segs);
    struct mieb_svg_series ss[MIEB_RP_MAX_SEGS];
    double *v = malloc(((size_t)nt * MIEB_RP_MAX_SEGS + 1) * sizeof *v), *tot = calloc(MIEB_RP_MAX_SEGS, sizeof *tot);
    const char **rows = calloc((size_t)nt + 1, sizeof *rows);
    char id[64];
    if (st == MIEB_OK && (!v || !tot || !rows))
        st = mieb_fail(MIEB_ERR_OOM, "report");
    if (st != MIEB_OK)
        goto out;
    for (int k = 0; k < segs.n; k++) {
        ss[k].name = segs.label[k];
        ss[k].color = k == segs.eval_other ? "#c7c7c7" : k == segs.unattributed ? "#e8e8e8"
                                                                                  : STAGE_COLORS[k % 10];
    }
    mieb_html_fmt(c->h, "<h2 id=\"time\">Time per task and stage</h2>\n<p class=\"note\">From each result's "
                        "evaluation_time and evaluation_phases (seconds). The stages are timed inside each subset's "
                        "evaluation; &#8220;Evaluation (other)&#8221; is the rest of it, and &#8220;unattributed&#8221; "
                        "is evaluation_time outside the recorded phases (all of it for a result without "
                        "phases, such as an aggregate task).</p>\n<div class=\"legend\">");
    for (int k = 0; k < segs.n; k++)
        mieb_html_fmt(c->h, "<span class=\"item\"><span class=\"sw\" style=\"background:%R\"></span>%s</span>",
                      ss[k].color, ss[k].name);
    mieb_html_fmt(c->h, "</div>\n<div class=\"card\"><table class=\"time\">\n<tr><th class=\"l\">Model</th>");
    for (int k = 0; k < segs.n; k++)
        mieb_html_fmt(c->h, "<th>%s</th>", ss[k].name);
    mieb_html_fmt(c->h, "<th>total</th></tr>\n");
    /* the totals table first (one row per model), then one chart per model, all on one scale */
    double row_max = 0.0;
    for (int pass = 0; pass < 2; pass++) {
        for (int p = 0; p < nm; p++) {
            int nr = 0;
            double all = 0.0;
            memset(tot, 0, MIEB_RP_MAX_SEGS * sizeof *tot);
            for (int t = 0; t < nt; t++)
                if (mieb_report_data_times(&segs, mieb_report_doc(c, p, t), v + (size_t)nr * segs.n)) {
                    double row = 0.0;
                    for (int k = 0; k < segs.n; k++) {
                        tot[k] += v[(size_t)nr * segs.n + k];
                        row += v[(size_t)nr * segs.n + k];
                    }
                    row_max = fmax(row_max, row);
                    rows[nr++] = lb->tasks[t]->name;
                }
            if (pass == 0) {
                mieb_html_fmt(c->h, "<tr data-series=\"%s\"><td class=\"l\"><span class=\"sw\" "
                                    "style=\"background:%R\"></span>%s</td>",
                              c->series[p].name, c->series[p].color, c->series[p].name);
                for (int k = 0; k < segs.n; k++) {
                    mieb_html_fmt(c->h, "<td data-col=\"%s\" data-value=\"%v\">%.3f</td>", ss[k].name, tot[k], tot[k]);
                    all += tot[k];
                }
                mieb_html_fmt(c->h, "<td data-col=\"total\" data-value=\"%v\">%.3f</td></tr>\n", all, all);
                continue;
            }
            mieb_html_fmt(c->h, "<div class=\"card\" data-series=\"%s\"><h3><span class=\"sw\" "
                                "style=\"background:%R\"></span>%s: %d result(s) with evaluation_time</h3>\n",
                          c->series[p].name, c->series[p].color, c->series[p].name, nr);
            snprintf(id, sizeof id, "time-%d", p);
            struct mieb_svg_stack sk = {.id = id, .n_rows = nr, .rows = rows, .n_segs = segs.n, .segs = ss, .v = v,
                                        .unit = "seconds", .vmax = row_max};
            if (nr)
                mieb_svg_stack(c->h, &sk);
            mieb_html_fmt(c->h, "</div>\n");
        }
        if (pass == 0)
            mieb_html_fmt(c->h, "</table></div>\n");
    }
out:
    free(v);
    free(tot);
    free(rows);
    mieb_report_data_segs_free(&segs);
    return st;
}
