/* report_placement.c - the card "Where your models stand" (see report_placement.h). */
#include "report_placement.h"

#include <math.h>
#include <stdio.h>

#include "../analysis/placement.h"
#include "../core/pyfloat.h"

static void rank_cell(struct mieb_report_ctx *c, const struct mieb_place *p)
{
    if (p->rank)
        mieb_html_fmt(c->h, "<td>%d of %d</td>", p->rank, p->n_ranked);
    else
        mieb_html_fmt(c->h, "<td class=\"na\">not ranked</td>");
}

/* The nearest published model on Mean(TaskType) on one side, with the difference (points x 100). */
static void neighbour_cell(struct mieb_report_ctx *c, const struct mieb_leaderboard *full, int j, int r)
{
    if (j < 0) {
        mieb_html_fmt(c->h, "<td class=\"l na\">-</td>");
        return;
    }
    char d[32];
    snprintf(d, sizeof d, "%+.2f", mieb_py_round(100.0 * (full->rows[j].mean_task_type - full->rows[r].mean_task_type), 2));
    mieb_html_fmt(c->h, "<td class=\"l\">%s <span class=\"dim\">(%s)</span></td>", full->rows[j].model->name, d);
}

void mieb_report_placement(struct mieb_report_ctx *c)
{
    const struct mieb_leaderboard *full = c->ex.full;
    struct mieb_placement *p = NULL;
    int n = 0, n_pub = 0;
    if (!full || mieb_placement_compute(full, &p, &n) != MIEB_OK)
        return;
    for (int i = 0; i < full->n_models; i++)
        n_pub += full->rows[i].published;
    mieb_html_fmt(c->h, "<h2 id=\"placement\">Where your models stand</h2>\n<p class=\"note\">Among the %d published "
                        "model revisions of %s, ranked together with yours as mteb's leaderboard ranks them; "
                        "this page shows yours (&#9733;) and the %d best published ones. A model lacking a task "
                        "has no Mean(TaskType) and is not ranked on it.</p>\n"
                        "<div class=\"card\"><table class=\"placement\">\n<tr><th class=\"l\">Model</th>"
                        "<th>Mean(TaskType)</th><th>rank</th><th>Rank(Borda)</th><th class=\"l\">published above</th>"
                        "<th class=\"l\">published below</th><th>missing tasks</th></tr>\n",
                  n_pub, c->ex.published ? c->ex.published : "the published folder", c->lb->n_models - n);
    for (int i = 0; i < n; i++) {
        const struct mieb_lb_row *row = &full->rows[p[i].row];
        char m[32];
        snprintf(m, sizeof m, isnan(row->mean_task_type) ? "-" : "%.2f", mieb_py_round(100.0 * row->mean_task_type, 2));
        mieb_html_fmt(c->h, "<tr class=\"own\"><td class=\"l\">&#9733; %s</td><td>%s</td>", row->model->name, m);
        rank_cell(c, &p[i].overall);
        rank_cell(c, &p[i].borda);
        neighbour_cell(c, full, p[i].overall.above, p[i].row);
        neighbour_cell(c, full, p[i].overall.below, p[i].row);
        mieb_html_fmt(c->h, "<td>%d</td></tr>\n", p[i].n_missing);
    }
    mieb_html_fmt(c->h, "</table></div>\n");
    mieb_placement_free(p, n);
}
