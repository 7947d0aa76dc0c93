/* report_page.c - the report page: style, summary, task-type charts, per-task table (see report_page.h). */
#include "report_page.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/pyfloat.h"
#include "report_heatmap.h"
#include "report_placement.h"
#include "report_sections.h"

/* Colours told apart by most readers: Tableau 10, then Tableau 20's light and extra shades, so
   20 models get 20 colours (reused after that). */
static const char *const PALETTE[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
                                      "#ff9da7", "#9c755f", "#bab0ac", "#a0cbe8", "#ffbe7d", "#8cd17d", "#b6992d",
                                      "#499894", "#86bcb6", "#d37295", "#fabfd2", "#79706e", "#d4a6c8"};

static const char *const CSS =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;color:#222;"
    "background:#f6f7f9;margin:0}\n"
    "main{max-width:1240px;margin:0 auto;padding:18px 24px 48px}\n"
    "h1{font-size:24px;margin:8px 0 4px}h2{font-size:19px;margin:30px 0 8px;padding-bottom:4px;"
    "border-bottom:2px solid #dde1e6}h3{font-size:14px;margin:4px 0 6px}\n"
    "p.meta{color:#555;margin:2px 0}p.note{color:#666;font-size:13px;margin:4px 0 8px}\n"
    "nav{margin:10px 0 4px;font-size:13px}nav a{margin-right:14px;color:#2f5d8a;text-decoration:none}\n"
    ".card{background:#fff;border:1px solid #e1e4e8;border-radius:6px;padding:12px 14px;margin:10px 0;"
    "overflow-x:auto}\n"
    ".row{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}.row>.card{margin:0}\n"
    ".grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(290px,1fr));gap:10px}.grid>.card{margin:0}\n"
    "table{border-collapse:collapse;font-size:13px;background:#fff}\n"
    "th,td{padding:3px 9px;border-bottom:1px solid #eceef1;text-align:right;white-space:nowrap}\n"
    "th{background:#f0f2f5;position:sticky;top:0}td.l,th.l{text-align:left}\n"
    "tr.type td{background:#f7f8fa;font-weight:600;text-align:left}\n"
    "td.pos{color:#1a7f37}td.neg{color:#cf222e}td.na{color:#999}span.dim{color:#888}\n"
    "tr.total td{font-weight:600;border-top:2px solid #dde1e6}\n"
    ".legend{font-size:13px;margin:6px 0}.legend span.item{margin-right:16px;white-space:nowrap}\n"
    ".sw{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:5px;vertical-align:-1px}\n"
    "svg text{font-family:inherit;font-size:11px;fill:#333}svg text.tick{font-size:10px;fill:#666}\n"
    "svg text.title{font-weight:600;font-size:12px}svg text.val{font-size:10px;fill:#444}\n"
    "svg text.na{font-size:9px;fill:#999}svg .grid{stroke:#e8e8e8}svg .axis{stroke:#888}\n"
    "svg .ring{fill:none;stroke:#dcdcdc}svg .radar-area{fill-opacity:.12;stroke-width:2}\n"
    "svg .line{fill:none;stroke-width:2}svg .range{stroke-width:2;opacity:.45}svg .mean{stroke-width:3}\n"
    "svg rect.bar:hover,svg rect.seg:hover{opacity:.75}\n"
    /* charts never overflow their card: scaled down to it, and the "fit" ones scaled to fill it */
    "svg.chart{max-width:100%;height:auto}svg.chart.fit{width:100%}\n"
    ".pair{display:grid;grid-template-columns:repeat(auto-fit,minmax(340px,1fr));gap:12px;align-items:start}"
    ".pair>.card{margin:0}\n"
    "table.heat td.heat{text-align:center;padding:3px 3px;font-size:12px;font-variant-numeric:tabular-nums}"
    "table.heat td.best{font-weight:700}table.heat th.vert{vertical-align:bottom;padding:4px 2px}\n"
    "table.heat th.vert>span{writing-mode:vertical-rl;transform:rotate(180deg);display:inline-block;"
    "max-height:230px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;font-weight:600}\n"
    "table.heat th.vert .sw{margin:0 0 5px 0}table.time th{white-space:normal}\n"
    "span.ci{color:#777;font-size:11px}span.sig{font-weight:700;margin-left:2px}\n"
    /* the user's own models among published ones: one colour band in the tables */
    "tr.own td{background:#fff3bf;font-weight:600}table.placement td{white-space:normal}\n";

/* A score as the leaderboard shows it: 100 x score rounded to 2 decimals, "-" when missing. */
static void pct(double x, char *buf, size_t n)
{
    if (isnan(x))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.2f", mieb_py_round(x * 100.0, 2));
}

/* A revision as shown: its first 12 characters (a commit hash prefix), the whole one in a tooltip. */
static void revision_cell(struct mieb_report_ctx *c, const char *rev)
{
    char shortrev[64];
    size_t n = strlen(rev);
    if (n <= 14) {
        mieb_html_fmt(c->h, "<td class=\"l\">%s</td>", rev);
        return;
    }
    n = 12;
    while (n > 0 && ((unsigned char)rev[n] & 0xC0) == 0x80)
        n--; /* not inside a UTF-8 sequence */
    snprintf(shortrev, sizeof shortrev, "%.*s", (int)n, rev);
    mieb_html_fmt(c->h, "<td class=\"l\" title=\"%s\">%s&#8230;</td>", rev, shortrev);
}

/* The bootstrap row of a table row (kind "task", "type" or "mean"; name) for the model of row index i, when
   --per-query folders gave one that covers the same tasks (an aggregate over fewer tasks would not). */
static const struct mieb_cmp_row *ci_row(const struct mieb_report_ctx *c, int i, const char *kind, const char *name)
{
    if (!c->ex.cmp || !c->ex.cmp[i] || !kind)
        return NULL;
    const struct mieb_cmp_row *r = mieb_cmp_find(c->ex.cmp[i], kind, name);
    if (!r || !strcmp(kind, "task"))
        return r;
    const struct mieb_leaderboard *lb = c->lb;
    int want = 0;
    if (!strcmp(kind, "type")) {
        for (int t = 0; t < lb->n_tasks; t++)
            want += !strcmp(lb->types[lb->task_type[t]], name);
    } else {
        want = !strcmp(name, "Mean(Task)") ? lb->n_tasks : lb->n_types;
    }
    return r->n_units == want ? r : NULL;
}

/* What the intervals on the deltas are, when there are any. */
static void ci_legend(const struct mieb_report_ctx *c)
{
    int any = 0;
    for (int i = 0; c->ex.cmp && i < c->lb->n_models; i++)
        any |= c->ex.cmp[i] != NULL;
    if (!any)
        return;
    const struct mieb_cmp *first = NULL;
    for (int i = 0; !first; i++)
        first = c->ex.cmp[i];
    mieb_html_fmt(c->h, "<p class=\"note\">[low, high]: the %g%% interval of &#916; from a paired bootstrap over the "
                        "queries or samples of the <code>--per-query</code> files (%lld resamples, as "
                        "<code>mieb-eval compare</code> computes it); <b>*</b>: p &lt; %g.</p>\n",
                  100.0 * (1.0 - c->ex.alpha), (long long)first->R, c->ex.alpha);
}

/* A delta cell's interval and significance mark, from the paired bootstrap. */
static void ci_text(const struct mieb_report_ctx *c, const struct mieb_cmp_row *r)
{
    const struct mieb_bs_result *b = &r->res;
    if (isnan(b->ci_low) || isnan(b->ci_high))
        return;
    mieb_html_fmt(c->h, " <span class=\"ci\">[%+.2f, %+.2f]</span>%R", b->ci_low * 100.0, b->ci_high * 100.0,
                  mieb_cmp_significant(r, c->ex.alpha) ? "<span class=\"sig\">*</span>" : "");
}

/* The cells of one table row: each model's value, then each other model's difference from the baseline,
   with its bootstrap interval where --per-query folders gave one (kind, name: the row, for ci_row). */
static void score_cells(struct mieb_report_ctx *c, const double *by_row, const char *kind, const char *name)
{
    const struct mieb_leaderboard *lb = c->lb;
    char a[32];
    for (int p = 0; p < lb->n_models; p++) {
        double x = by_row[lb->order[p]];
        pct(x, a, sizeof a);
        mieb_html_fmt(c->h, "<td class=\"score%R\" data-series=\"%s\" data-value=\"%v\">%s</td>",
                      isnan(x) ? " na" : "", c->series[p].name, x, a);
    }
    for (int p = 0; p < lb->n_models; p++) {
        if (lb->order[p] == c->baseline)
            continue;
        double d = by_row[lb->order[p]] - by_row[c->baseline];
        if (isnan(d)) {
            mieb_html_fmt(c->h, "<td class=\"delta na\" data-series=\"%s\" data-value=\"nan\">-</td>",
                          c->series[p].name);
            continue;
        }
        snprintf(a, sizeof a, "%+.2f", d * 100.0);
        const struct mieb_cmp_row *r = ci_row(c, lb->order[p], kind, name);
        mieb_html_fmt(c->h, "<td class=\"delta%R\" data-series=\"%s\" data-value=\"%v\"", d > 0 ? " pos" : d < 0 ? " neg" : "",
                      c->series[p].name, d);
        if (r)
            mieb_html_fmt(c->h, " data-ci-low=\"%v\" data-ci-high=\"%v\" data-p=\"%v\"", r->res.ci_low, r->res.ci_high,
                          r->res.p_value);
        mieb_html_fmt(c->h, ">%s", a);
        if (r)
            ci_text(c, r);
        mieb_html_fmt(c->h, "</td>");
    }
    mieb_html_fmt(c->h, "</tr>\n");
}

/* Header cells of a table with one column per model, then one delta column per non-baseline model. */
static void model_columns(struct mieb_report_ctx *c)
{
    const struct mieb_leaderboard *lb = c->lb;
    for (int p = 0; p < lb->n_models; p++)
        mieb_html_fmt(c->h, "<th><span class=\"sw\" style=\"background:%R\"></span>%s</th>", c->series[p].color,
                      c->series[p].name);
    for (int p = 0; p < lb->n_models; p++)
        if (lb->order[p] != c->baseline)
            mieb_html_fmt(c->h, "<th>&#916; %s</th>", c->series[p].name);
    mieb_html_fmt(c->h, "</tr>\n");
}

static mieb_status summary(struct mieb_report_ctx *c)
{
    const struct mieb_leaderboard *lb = c->lb;
    char a[32], b[32];
    mieb_html_fmt(c->h, "<h2 id=\"summary\">Summary</h2>\n<p class=\"note\">The leaderboard numbers as mteb computes "
                        "them (100 &#215; score); a task without a complete score leaves the means empty. "
                        "&#916;: the model minus the baseline, <b>%s</b>.</p>\n"
                        "<div class=\"card\"><table class=\"summary\">\n<tr><th>Rank</th><th class=\"l\">Model</th>"
                        "<th class=\"l\">Revision</th><th>Mean(TaskType)</th><th>Mean(Task)</th><th>Rank(Borda)</th>"
                        "<th>Tasks</th><th class=\"l\">Produced by</th></tr>\n",
                  c->series[mieb_report_pos(lb, c->baseline)].name);
    for (int p = 0; p < lb->n_models; p++) {
        const struct mieb_lb_row *row = &lb->rows[lb->order[p]];
        pct(row->mean_task_type, a, sizeof a);
        pct(row->mean_task, b, sizeof b);
        mieb_html_fmt(c->h,
                      "<tr data-series=\"%s\"%R><td>%d</td><td class=\"l\"><span class=\"sw\" style=\"background:%R\">"
                      "</span>%s</td>",
                      c->series[p].name, mieb_report_own(lb, lb->order[p]) ? " class=\"own\"" : "", row->rank,
                      c->series[p].color, row->model->name);
        revision_cell(c, row->model->revision);
        mieb_html_fmt(c->h, "<td data-col=\"Mean(TaskType)\">%s</td><td data-col=\"Mean(Task)\">%s</td>", a, b);
        if (row->borda_rank)
            mieb_html_fmt(c->h, "<td data-col=\"Rank(Borda)\">%d</td>", row->borda_rank);
        else
            mieb_html_fmt(c->h, "<td data-col=\"Rank(Borda)\">-</td>");
        const char *by = c->ex.produced_by ? c->ex.produced_by[lb->order[p]] : NULL;
        mieb_html_fmt(c->h, "<td data-col=\"Tasks\">%d/%d</td><td class=\"l\" data-col=\"produced_by\">%s</td></tr>\n",
                      row->n_complete, lb->n_tasks, by && by[0] ? by : "-");
    }
    mieb_html_fmt(c->h, "</table></div>\n");
    if (lb->n_models > MIEB_REPORT_MAX_GROUPED) /* the type means are the next section's heatmap */
        return MIEB_OK;
    ci_legend(c);
    mieb_html_fmt(c->h, "<div class=\"card\"><table class=\"type-means\">\n"
                        "<tr><th class=\"l\">Task type (tasks)</th>");
    model_columns(c);
    double *by_row = malloc(((size_t)lb->n_models + 1) * sizeof *by_row);
    if (!by_row)
        return mieb_fail(MIEB_ERR_OOM, "report");
    for (int k = 0; k < lb->n_types; k++) {
        int n = 0;
        for (int t = 0; t < lb->n_tasks; t++)
            n += lb->task_type[t] == k;
        for (int i = 0; i < lb->n_models; i++)
            by_row[i] = lb->rows[i].type_mean[k];
        mieb_html_fmt(c->h, "<tr data-label=\"%s\"><td class=\"l\">%s <span class=\"dim\">(%d)</span></td>",
                      lb->types[k], lb->types[k], n);
        score_cells(c, by_row, "type", lb->types[k]);
    }
    for (int i = 0; i < lb->n_models; i++)
        by_row[i] = lb->rows[i].mean_task_type;
    mieb_html_fmt(c->h, "<tr class=\"total\" data-label=\"Mean(TaskType)\"><td class=\"l\">Mean(TaskType)</td>");
    score_cells(c, by_row, "mean", "Mean(TaskType)");
    for (int i = 0; i < lb->n_models; i++)
        by_row[i] = lb->rows[i].mean_task;
    mieb_html_fmt(c->h, "<tr class=\"total\" data-label=\"Mean(Task)\"><td class=\"l\">Mean(Task)</td>");
    score_cells(c, by_row, "mean", "Mean(Task)");
    free(by_row);
    mieb_html_fmt(c->h, "</table></div>\n");
    return MIEB_OK;
}

/* The low end of a score axis: 0, or below the lowest value when some are negative. */
static double score_floor(const double *v, size_t n)
{
    double lo = 0.0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i]) && v[i] < lo)
            lo = v[i];
    return lo < 0 ? floor(lo * 10.0) / 10.0 : 0.0;
}

static double score_ceil(const double *v, size_t n)
{
    double hi = 1.0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i]) && v[i] > hi)
            hi = v[i];
    return hi > 1.0 ? ceil(hi * 10.0) / 10.0 : 1.0;
}

/* Many models: the type means (v: [model position][type]) and both overall means as one heatmap. */
static mieb_status type_heatmap(struct mieb_report_ctx *c, const double *v)
{
    const struct mieb_leaderboard *lb = c->lb;
    const int nm = lb->n_models, nr = lb->n_types + 2;
    struct mieb_heat_row *rows = calloc((size_t)nr, sizeof *rows);
    double *by_type = malloc(((size_t)nr * nm + 1) * sizeof *by_type);
    if (!rows || !by_type) {
        free(rows);
        free(by_type);
        return mieb_fail(MIEB_ERR_OOM, "report");
    }
    for (int k = 0; k < nr; k++)
        for (int p = 0; p < nm; p++)
            by_type[(size_t)k * nm + p] = k < lb->n_types ? v[(size_t)p * lb->n_types + k]
                                          : k == lb->n_types ? lb->rows[lb->order[p]].mean_task_type
                                                             : lb->rows[lb->order[p]].mean_task;
    for (int k = 0; k < nr; k++)
        rows[k] = (struct mieb_heat_row){k < lb->n_types ? lb->types[k] : k == lb->n_types ? "Mean(TaskType)" : "Mean(Task)",
                                         by_type + (size_t)k * nm, k >= lb->n_types};
    mieb_html_fmt(c->h, "<p class=\"note\">With more than %d models, a heatmap: each row is coloured from its lowest "
                        "score (light) to its highest (dark, bold).</p>\n",
                  MIEB_REPORT_MAX_GROUPED);
    mieb_report_heatmap(c, "type-heat", rows, nr);
    free(rows);
    free(by_type);
    return MIEB_OK;
}

static mieb_status task_types(struct mieb_report_ctx *c)
{
    const struct mieb_leaderboard *lb = c->lb;
    size_t n = (size_t)lb->n_models * lb->n_types;
    double *v = malloc((n + 1) * sizeof *v);
    if (!v)
        return mieb_fail(MIEB_ERR_OOM, "report");
    for (int p = 0; p < lb->n_models; p++)
        for (int k = 0; k < lb->n_types; k++)
            v[(size_t)p * lb->n_types + k] = lb->rows[lb->order[p]].type_mean[k];
    double lo = score_floor(v, n), hi = score_ceil(v, n);
    mieb_html_fmt(c->h, "<h2 id=\"types\">Task types</h2>\n<p class=\"note\">Mean score of each task type "
                        "(100 &#215; score); a type with an incomplete task has no mean (n/a).</p>\n");
    if (lb->n_models > MIEB_REPORT_MAX_GROUPED) {
        mieb_status st = type_heatmap(c, v);
        free(v);
        return st;
    }
    mieb_report_legend(c);
    mieb_html_fmt(c->h, "<div class=\"pair\"><div class=\"card\"><h3>Mean per task type</h3>\n");
    struct mieb_svg_bars bars = {.id = "type-means", .horizontal = 1, .n_groups = lb->n_types, .groups = lb->types,
                                 .n_series = lb->n_models, .series = c->series, .v = v, .vmin = lo, .vmax = hi,
                                 .mul = 100.0, .value_labels = 1, .decimals = 1, .fit_width = 560.0};
    mieb_svg_bars(c->h, &bars);
    mieb_html_fmt(c->h, "</div><div class=\"card\"><h3>Radar over task types</h3>\n");
    struct mieb_svg_radar radar = {.id = "radar", .n_axes = lb->n_types, .axes = lb->types, .n_series = lb->n_models,
                                   .series = c->series, .v = v, .vmin = lo, .vmax = hi, .mul = 100.0};
    mieb_svg_radar(c->h, &radar);
    mieb_html_fmt(c->h, "</div></div>\n");
    free(v);
    return MIEB_OK;
}

/* One bar chart per task type: its tasks' scores, one bar per model. */
static mieb_status per_type(struct mieb_report_ctx *c)
{
    const struct mieb_leaderboard *lb = c->lb;
    const char **names = calloc((size_t)lb->n_tasks + 1, sizeof *names);
    double *v = calloc((size_t)lb->n_models * lb->n_tasks + 1, sizeof *v);
    char id[300];
    if (!names || !v) {
        free(names);
        free(v);
        return mieb_fail(MIEB_ERR_OOM, "report");
    }
    const char **all = calloc((size_t)lb->n_tasks + 1, sizeof *all);
    for (int t = 0; all && t < lb->n_tasks; t++)
        all[t] = lb->tasks[t]->name;
    const double label_w = all ? mieb_svg_max_width(all, lb->n_tasks) : 0.0; /* one label column for all charts */
    free(all);
    mieb_html_fmt(c->h, "<h2 id=\"per-type\">Tasks by type</h2>\n");
    if (lb->n_models > MIEB_REPORT_MAX_GROUPED) {
        mieb_html_fmt(c->h, "<p class=\"note\">With more than %d models, the <a href=\"#heatmap\">heatmap</a> shows "
                            "every task's score.</p>\n",
                      MIEB_REPORT_MAX_GROUPED);
        free(names);
        free(v);
        return MIEB_OK;
    }
    mieb_html_fmt(c->h, "<p class=\"note\">Main score of every task (100 &#215; score), one chart per task "
                        "type.</p>\n");
    mieb_report_legend(c);
    for (int k = 0; k < lb->n_types; k++) {
        int n = 0;
        for (int t = 0; t < lb->n_tasks; t++)
            if (lb->task_type[t] == k)
                names[n++] = lb->tasks[t]->name;
        for (int p = 0; p < lb->n_models; p++)
            for (int i = 0, j = 0; i < lb->n_tasks; i++)
                if (lb->task_type[i] == k)
                    v[(size_t)p * n + j++] = lb->rows[lb->order[p]].task_score[i];
        snprintf(id, sizeof id, "type-%s", lb->types[k]);
        mieb_html_fmt(c->h, "<div class=\"card\"><h3>%s</h3>\n", lb->types[k]);
        size_t nv = (size_t)lb->n_models * n;
        struct mieb_svg_bars bars = {.id = id, .horizontal = 1, .n_groups = n, .groups = names,
                                     .n_series = lb->n_models, .series = c->series, .v = v,
                                     .vmin = score_floor(v, nv), .vmax = score_ceil(v, nv), .mul = 100.0,
                                     .value_labels = 1, .decimals = 1, .label_w = label_w, .fit_width = 1160.0};
        mieb_svg_bars(c->h, &bars);
        mieb_html_fmt(c->h, "</div>\n");
    }
    free(names);
    free(v);
    return MIEB_OK;
}

/* Every task's score per model as a heatmap, tasks grouped by type under a heading row each. */
static mieb_status heatmap(struct mieb_report_ctx *c)
{
    const struct mieb_leaderboard *lb = c->lb;
    const int nm = lb->n_models, nr = lb->n_types + lb->n_tasks;
    struct mieb_heat_row *rows = calloc((size_t)nr + 1, sizeof *rows);
    double *v = malloc(((size_t)lb->n_tasks * nm + 1) * sizeof *v);
    if (!rows || !v) {
        free(rows);
        free(v);
        return mieb_fail(MIEB_ERR_OOM, "report");
    }
    int r = 0;
    for (int k = 0; k < lb->n_types; k++) {
        rows[r++] = (struct mieb_heat_row){lb->types[k], NULL, 0};
        for (int t = 0; t < lb->n_tasks; t++) {
            if (lb->task_type[t] != k)
                continue;
            for (int p = 0; p < nm; p++)
                v[(size_t)t * nm + p] = lb->rows[lb->order[p]].task_score[t];
            rows[r++] = (struct mieb_heat_row){lb->tasks[t]->name, v + (size_t)t * nm, 0};
        }
    }
    mieb_html_fmt(c->h, "<h2 id=\"heatmap\">Heatmap</h2>\n<p class=\"note\">Main score of every task (100 &#215; "
                        "score), models in leaderboard order; each row is coloured from its lowest score (light) to "
                        "its highest (dark, bold).</p>\n");
    mieb_report_heatmap(c, "tasks-heat", rows, r);
    free(rows);
    free(v);
    return MIEB_OK;
}

/* Every task's score per model and, for each other model, its difference from the baseline. */
static mieb_status task_table(struct mieb_report_ctx *c)
{
    const struct mieb_leaderboard *lb = c->lb;
    if (lb->n_models > MIEB_REPORT_MAX_GROUPED) {
        mieb_html_fmt(c->h, "<h2 id=\"tasks\">Per task</h2>\n<p class=\"note\">With more than %d models, the "
                            "<a href=\"#heatmap\">heatmap</a> holds every task's score; a model's differences "
                            "from another are in <code>mieb-eval compare</code> or a report of the two.</p>\n",
                      MIEB_REPORT_MAX_GROUPED);
        return MIEB_OK;
    }
    double *by_row = malloc(((size_t)lb->n_models + 1) * sizeof *by_row);
    if (!by_row)
        return mieb_fail(MIEB_ERR_OOM, "report");
    mieb_html_fmt(c->h, "<h2 id=\"tasks\">Per task</h2>\n<p class=\"note\">Main score (100 &#215; score). "
                        "&#916;: the model minus the baseline, <b>%s</b>.</p>\n",
                  c->series[mieb_report_pos(lb, c->baseline)].name);
    ci_legend(c);
    mieb_html_fmt(c->h, "<div class=\"card\"><table class=\"tasks\">\n<tr><th class=\"l\">Task</th><th class=\"l\">Metric</th>");
    model_columns(c);
    for (int k = 0; k < lb->n_types; k++) {
        mieb_html_fmt(c->h, "<tr class=\"type\"><td colspan=\"%d\">%s</td></tr>\n", 1 + 2 * lb->n_models,
                      lb->types[k]);
        for (int t = 0; t < lb->n_tasks; t++) {
            if (lb->task_type[t] != k)
                continue;
            for (int i = 0; i < lb->n_models; i++)
                by_row[i] = lb->rows[i].task_score[t];
            mieb_html_fmt(c->h, "<tr data-task=\"%s\"><td class=\"l\">%s</td><td class=\"l\">%s</td>",
                          lb->tasks[t]->name, lb->tasks[t]->name, lb->tasks[t]->main_score);
            score_cells(c, by_row, "task", lb->tasks[t]->name);
        }
    }
    mieb_html_fmt(c->h, "</table></div>\n");
    free(by_row);
    return MIEB_OK;
}

/* Labels for the series: the model name, with the revision added when two rows share a name. */
static mieb_status make_series(struct mieb_report_ctx *c, char ***labels)
{
    const struct mieb_leaderboard *lb = c->lb;
    c->series = calloc((size_t)lb->n_models + 1, sizeof *c->series);
    *labels = calloc((size_t)lb->n_models + 1, sizeof **labels);
    if (!c->series || !*labels)
        return mieb_fail(MIEB_ERR_OOM, "report");
    for (int p = 0; p < lb->n_models; p++) {
        const struct mieb_model_results *m = lb->rows[lb->order[p]].model;
        bool dup = false, dup_rev = false;
        for (int q = 0; q < lb->n_models; q++)
            if (q != lb->order[p] && !strcmp(lb->rows[q].model->name, m->name)) {
                dup = true;
                dup_rev |= !strcmp(lb->rows[q].model->revision, m->revision);
            }
        size_t len = strlen(m->name) + strlen(m->revision) + 24;
        char *s = malloc(len);
        if (!s)
            return mieb_fail(MIEB_ERR_OOM, "report");
        /* among published models, the own ones carry a star in every legend, label and table */
        const char *star = mieb_report_own(lb, lb->order[p]) ? "\u2605 " : "";
        if (dup_rev) /* the same model and revision in two folders: told apart by leaderboard position */
            snprintf(s, len, "%s%s@%s #%d", star, m->name, m->revision, p + 1);
        else if (dup)
            snprintf(s, len, "%s%s@%s", star, m->name, m->revision);
        else
            snprintf(s, len, "%s%s", star, m->name);
        (*labels)[p] = s;
        c->series[p].name = s;
        c->series[p].color = PALETTE[p % (sizeof PALETTE / sizeof *PALETTE)];
    }
    return MIEB_OK;
}

mieb_status mieb_report_page(const struct mieb_leaderboard *lb, cJSON **docs, int baseline, const char *bench,
                             const struct mieb_report_extras *ex, struct mieb_html *h)
{
    struct mieb_report_ctx c = {lb, docs, baseline, bench, NULL, h, ex ? *ex : (struct mieb_report_extras){.alpha = 0.05}};
    char **labels = NULL;
    mieb_status st = make_series(&c, &labels);
    if (st == MIEB_OK) {
        mieb_html_fmt(h, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                         "<title>mieb-eval report: %s</title>\n<style>\n%R</style>\n</head>\n<body>\n<main>\n"
                         "<h1>mieb-eval report</h1>\n",
                      bench ? bench : "result folders", CSS);
        mieb_html_fmt(h, "<p class=\"meta\">Benchmark: <b>%s</b> &#183; %d tasks in %d task types &#183; %d model "
                         "revision(s) &#183; mieb-eval %s</p>\n",
                      bench ? bench : "(the tasks found)", lb->n_tasks, lb->n_types, lb->n_models, MIEB_VERSION);
        mieb_html_fmt(h, "<nav><a href=\"#summary\">Summary</a><a href=\"#types\">Task types</a>"
                         "<a href=\"#per-type\">Tasks by type</a><a href=\"#heatmap\">Heatmap</a>"
                         "<a href=\"#tasks\">Per task</a>"
                         "<a href=\"#probe\">Linear probe</a><a href=\"#recall\">Recall@k</a>"
                         "<a href=\"#languages\">Languages</a><a href=\"#time\">Time</a></nav>\n");
        mieb_report_placement(&c);
        st = summary(&c);
    }
    if (st == MIEB_OK)
        st = task_types(&c);
    if (st == MIEB_OK)
        st = per_type(&c);
    if (st == MIEB_OK)
        st = heatmap(&c);
    if (st == MIEB_OK)
        st = task_table(&c);
    if (st == MIEB_OK) {
        mieb_report_probe(&c);
        mieb_report_recall(&c);
        mieb_report_languages(&c);
        st = mieb_report_time(&c);
    }
    if (st == MIEB_OK)
        mieb_html_fmt(h, "</main>\n</body>\n</html>\n");
    for (int p = 0; labels && p < lb->n_models; p++)
        free(labels[p]);
    free(labels);
    free(c.series);
    return st != MIEB_OK ? st : h->st;
}
