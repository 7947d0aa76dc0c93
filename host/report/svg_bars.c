/* svg_bars.c - grouped bar charts, vertical or horizontal (see svg_chart.h). */
#include <math.h>
#include <stdio.h>

#include "svg_chart.h"

#define BAR 12.0       /* bar thickness, at most */
#define GAP 10.0       /* between groups */
#define MAX_WIDTH 1120 /* a vertical chart narrows its bars to fit the page */

void mieb_svg_bars(struct mieb_html *h, const struct mieb_svg_bars *c)
{
    const double label_w = c->label_w > 0 ? c->label_w : mieb_svg_max_width(c->groups, c->n_groups);
    const double right = c->value_labels ? 50 : 20;
    const int fit = c->horizontal && c->fit_width > 0;
    const double plot_len = fit ? fmax(c->fit_width - (label_w + 16) - right, 120.0)
                            : c->plot_len > 0 ? c->plot_len : c->horizontal ? 560.0 : 280.0;
    const double span = c->vmax - c->vmin, sc = plot_len / (span > 0 ? span : 1.0);
    const double step = mieb_svg_tick_step(c->vmin * c->mul, c->vmax * c->mul);
    double bar = BAR, left, top, width, height, v0, across0;
    char buf[48];
    if (c->horizontal) {
        left = label_w + 16;
        top = 10;
        width = left + plot_len + right;
        height = top + c->n_groups * (c->n_series * bar + GAP) + 28;
        v0 = left; /* pixel of vmin on the x axis */
        across0 = top;
    } else {
        left = 44;
        top = 12;
        double fit = ((MAX_WIDTH - left - 16) / (c->n_groups > 0 ? c->n_groups : 1) - GAP) / c->n_series;
        bar = fmax(fmin(BAR, fit), 3.0);
        double group = c->n_series * bar + GAP;
        double lab = label_w > group ? label_w * 0.71 + 12 : 20; /* rotated 45 deg when too long */
        width = fmax(left + c->n_groups * group + 16, 360);
        height = top + plot_len + lab + 8;
        v0 = top + plot_len; /* pixel of vmin on the y axis */
        across0 = left;
    }
    const double group = c->n_series * bar + GAP;
    mieb_html_fmt(h,
                  "<svg class=\"chart bars%R\" data-chart=\"%s\" data-horizontal=\"%d\" data-v0=\"%.2f\" "
                  "data-scale=\"%v\" data-vmin=\"%v\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                  "role=\"img\">\n",
                  fit ? " fit" : "", c->id, c->horizontal, v0, sc, c->vmin, width, height, width, height);
    /* value axis: grid lines and tick labels */
    double first = ceil(c->vmin * c->mul / step - 1e-9) * step;
    for (double t = first; t <= c->vmax * c->mul + 1e-9; t += step) {
        double p = c->horizontal ? v0 + (t / c->mul - c->vmin) * sc : v0 - (t / c->mul - c->vmin) * sc;
        mieb_svg_fmt_shown(t, step < 1 ? 1 : 0, buf, sizeof buf);
        if (c->horizontal)
            mieb_html_fmt(h,
                          "<line class=\"grid\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>"
                          "<text class=\"tick\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%s</text>\n",
                          p, top - 4, p, top + c->n_groups * group, p, top + c->n_groups * group + 16, buf);
        else
            mieb_html_fmt(h,
                          "<line class=\"grid\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>"
                          "<text class=\"tick\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">%s</text>\n",
                          left - 4, p, left + c->n_groups * group, p, left - 8, p + 4, buf);
    }
    for (int g = 0; g < c->n_groups; g++) {
        double a = across0 + g * group + GAP / 2; /* start of the group across the value axis */
        if (c->horizontal)
            mieb_html_fmt(h, "<text class=\"label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">%s</text>\n",
                          left - 8, a + c->n_series * bar / 2 + 4, c->groups[g]);
        else if (label_w > group)
            mieb_html_fmt(h,
                          "<text class=\"label\" transform=\"translate(%.2f,%.2f) rotate(-45)\" "
                          "text-anchor=\"end\">%s</text>\n",
                          a + c->n_series * bar / 2 + 3, v0 + 12, c->groups[g]);
        else
            mieb_html_fmt(h, "<text class=\"label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%s</text>\n",
                          a + c->n_series * bar / 2, v0 + 16, c->groups[g]);
        for (int s = 0; s < c->n_series; s++) {
            double v = c->v[s * c->n_groups + g], b = a + s * bar;
            if (isnan(v)) { /* missing: a small "n/a" where the bar would start */
                mieb_html_fmt(h,
                              "<text class=\"na\" data-series=\"%s\" data-label=\"%s\" "
                              "transform=\"translate(%.2f,%.2f) rotate(%d)\">n/a</text>\n",
                              c->series[s].name, c->groups[g], c->horizontal ? v0 + 4 : b + bar - 3,
                              c->horizontal ? b + bar - 2 : v0 - 4, c->horizontal ? 0 : -90);
                continue;
            }
            double lo = fmin(fmax(fmin(v, 0.0), c->vmin), c->vmax), hi = fmin(fmax(fmax(v, 0.0), c->vmin), c->vmax);
            double len = (hi - lo) * sc;
            mieb_svg_fmt_shown(v * c->mul, c->decimals, buf, sizeof buf);
            if (c->horizontal)
                mieb_html_fmt(h,
                              "<rect class=\"bar\" data-series=\"%s\" data-label=\"%s\" data-value=\"%v\" "
                              "x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\">"
                              "<title>%s, %s: %s</title></rect>\n",
                              c->series[s].name, c->groups[g], v, v0 + (lo - c->vmin) * sc, b, len, bar - 1,
                              c->series[s].color, c->series[s].name, c->groups[g], buf);
            else
                mieb_html_fmt(h,
                              "<rect class=\"bar\" data-series=\"%s\" data-label=\"%s\" data-value=\"%v\" "
                              "x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\">"
                              "<title>%s, %s: %s</title></rect>\n",
                              c->series[s].name, c->groups[g], v, b, v0 - (hi - c->vmin) * sc, bar - 1, len,
                              c->series[s].color, c->series[s].name, c->groups[g], buf);
            if (c->value_labels && c->horizontal)
                mieb_html_fmt(h, "<text class=\"val\" x=\"%.2f\" y=\"%.2f\">%s</text>\n",
                              v0 + (hi - c->vmin) * sc + 3, b + bar - 2.5, buf);
        }
    }
    /* the axis at value 0 (or the minimum) */
    double zp = (fmin(fmax(0.0, c->vmin), c->vmax) - c->vmin) * sc;
    if (c->horizontal)
        mieb_html_fmt(h, "<line class=\"axis\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", v0 + zp,
                      top - 4, v0 + zp, top + c->n_groups * group);
    else
        mieb_html_fmt(h, "<line class=\"axis\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", left - 4,
                      v0 - zp, left + c->n_groups * group, v0 - zp);
    mieb_html_fmt(h, "</svg>\n");
}
