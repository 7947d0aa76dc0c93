/* report_heatmap.c - score tables coloured by each score's place in its row (see report_heatmap.h). */
#include <math.h>
#include <stdio.h>

#include "../core/pyfloat.h"
#include "report_heatmap.h"

/* The sequential scale: the row's lowest score is the light end, its highest the dark one. */
static const int LOW[3] = {247, 251, 255}, HIGH[3] = {33, 102, 172};

static void row_range(const double *v, int n, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int i = 0; i < n; i++)
        if (!isnan(v[i])) {
            *lo = fmin(*lo, v[i]);
            *hi = fmax(*hi, v[i]);
        }
}

static void cell(struct mieb_report_ctx *c, int p, const char *label, double x, double lo, double hi)
{
    if (isnan(x)) {
        mieb_html_fmt(c->h, "<td class=\"heat na\" data-series=\"%s\" data-label=\"%s\" data-value=\"nan\">-</td>",
                      c->series[p].name, label);
        return;
    }
    /* one score in the row, or all equal: the middle of the scale */
    double t = hi > lo ? (x - lo) / (hi - lo) : 0.5;
    int rgb[3];
    for (int k = 0; k < 3; k++)
        rgb[k] = (int)lround(LOW[k] + t * (HIGH[k] - LOW[k]));
    char shown[32], full[32], style[64];
    snprintf(shown, sizeof shown, "%.1f", mieb_py_round(x * 100.0, 1)); /* narrow cells; the tooltip has 2 */
    snprintf(full, sizeof full, "%.2f", mieb_py_round(x * 100.0, 2));
    snprintf(style, sizeof style, "background:#%02x%02x%02x%s", rgb[0], rgb[1], rgb[2], t > 0.55 ? ";color:#fff" : "");
    mieb_html_fmt(c->h,
                  "<td class=\"heat%R\" data-series=\"%s\" data-label=\"%s\" data-value=\"%v\" style=\"%R\" "
                  "title=\"%s, %s: %s\">%s</td>",
                  x == hi && hi > lo ? " best" : "", c->series[p].name, label, x, style, c->series[p].name, label,
                  full, shown);
}

void mieb_report_heatmap(struct mieb_report_ctx *c, const char *id, const struct mieb_heat_row *rows, int n_rows)
{
    const int nm = c->lb->n_models;
    mieb_html_fmt(c->h, "<div class=\"card\"><table class=\"heat\" data-heatmap=\"%s\">\n<tr><th class=\"l\"></th>",
                  id);
    for (int p = 0; p < nm; p++)
        mieb_html_fmt(c->h, "<th class=\"vert\" title=\"%s\"><span><span class=\"sw\" style=\"background:%R\">"
                            "</span>%s</span></th>",
                      c->series[p].name, c->series[p].color, c->series[p].name);
    mieb_html_fmt(c->h, "</tr>\n");
    for (int r = 0; r < n_rows; r++) {
        const struct mieb_heat_row *row = &rows[r];
        if (!row->v) { /* a group heading */
            mieb_html_fmt(c->h, "<tr class=\"type\"><td colspan=\"%d\">%s</td></tr>\n", nm + 1, row->label);
            continue;
        }
        double lo, hi;
        row_range(row->v, nm, &lo, &hi);
        mieb_html_fmt(c->h, "<tr%R data-heat-row=\"%s\"><td class=\"l\">%s</td>", row->total ? " class=\"total\"" : "",
                      row->label, row->label);
        for (int p = 0; p < nm; p++)
            cell(c, p, row->label, row->v[p], lo, hi);
        mieb_html_fmt(c->h, "</tr>\n");
    }
    mieb_html_fmt(c->h, "</table></div>\n");
}
