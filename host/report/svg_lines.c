/* svg_lines.c - recall@k lines on a log-x axis and probe-spread strips (see svg_chart.h). */
#include <math.h>
#include <stdio.h>

#include "svg_chart.h"

#define PW 230.0 /* plot width and height of one small line chart */
#define PH 140.0

static void y_axis(struct mieb_html *h, double left, double v0, double sc, double vmin, double vmax, double mul,
                   double x2)
{
    char buf[48];
    double step = mieb_svg_tick_step(vmin * mul, vmax * mul);
    for (double t = ceil(vmin * mul / step - 1e-9) * step; t <= vmax * mul + 1e-9; t += step) {
        double p = v0 - (t / mul - vmin) * sc;
        mieb_svg_fmt_shown(t, step < 1 ? 1 : 0, buf, sizeof buf);
        mieb_html_fmt(h,
                      "<line class=\"grid\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>"
                      "<text class=\"tick\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">%s</text>\n",
                      left - 3, p, x2, p, left - 6, p + 4, buf);
    }
}

void mieb_svg_lines(struct mieb_html *h, const struct mieb_svg_lines *c)
{
    const double left = 40, top = 24, width = left + PW + 14, height = top + PH + 34;
    const double v0 = top + PH, sc = PH / (c->vmax - c->vmin);
    const double lx0 = log10(c->x[0]), lspan = c->n_x > 1 ? log10(c->x[c->n_x - 1]) - lx0 : 1.0;
    const double xs = PW / (lspan > 0 ? lspan : 1.0);
    char buf[48];
    mieb_html_fmt(h,
                  "<svg class=\"chart lines fit\" data-chart=\"%s\" data-v0=\"%.2f\" data-scale=\"%v\" data-vmin=\"%v\" "
                  "data-x0=\"%.2f\" data-xscale=\"%v\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                  "role=\"img\">\n<text class=\"title\" x=\"%.2f\" y=\"14\">%s</text>\n",
                  c->id, v0, sc, c->vmin, left, xs, width, height, width, height, left, c->title);
    y_axis(h, left, v0, sc, c->vmin, c->vmax, c->mul, left + PW);
    for (int i = 0; i < c->n_x; i++) {
        double px = left + (log10(c->x[i]) - lx0) * xs;
        mieb_html_fmt(h, "<text class=\"tick\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%g</text>\n", px, v0 + 14,
                      c->x[i]);
    }
    mieb_html_fmt(h, "<text class=\"tick\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">k</text>\n", left + PW / 2,
                  v0 + 28);
    for (int s = 0; s < c->n_series; s++) {
        const double *v = c->v + (size_t)s * c->n_x;
        mieb_html_fmt(h, "<polyline class=\"line\" data-series=\"%s\" stroke=\"%s\" points=\"", c->series[s].name,
                      c->series[s].color);
        for (int i = 0; i < c->n_x; i++)
            if (!isnan(v[i]))
                mieb_html_fmt(h, "%.2f,%.2f ", left + (log10(c->x[i]) - lx0) * xs, v0 - (v[i] - c->vmin) * sc);
        mieb_html_fmt(h, "\"/>\n");
        for (int i = 0; i < c->n_x; i++) {
            if (isnan(v[i]))
                continue;
            mieb_svg_fmt_shown(v[i] * c->mul, 2, buf, sizeof buf);
            mieb_html_fmt(h,
                          "<circle class=\"pt\" data-series=\"%s\" data-x=\"%v\" data-value=\"%v\" cx=\"%.2f\" "
                          "cy=\"%.2f\" r=\"2.5\" fill=\"%s\"><title>%s, recall@%g: %s</title></circle>\n",
                          c->series[s].name, c->x[i], v[i], left + (log10(c->x[i]) - lx0) * xs,
                          v0 - (v[i] - c->vmin) * sc, c->series[s].color, c->series[s].name, c->x[i], buf);
        }
    }
    mieb_html_fmt(h, "</svg>\n");
}

void mieb_svg_spread(struct mieb_html *h, const struct mieb_svg_spread *c)
{
    const double strip = 18.0, gap = 14.0, group = c->n_series * strip + gap;
    const double label_w = mieb_svg_max_width(c->groups, c->n_groups), ph = 240.0;
    const double left = 44, top = 12, v0 = top + ph, sc = ph / (c->vmax - c->vmin);
    double width = left + c->n_groups * group + 16, height = v0 + (label_w > group ? label_w * 0.71 + 12 : 20) + 8;
    char buf[48];
    if (width < 360)
        width = 360;
    mieb_html_fmt(h,
                  "<svg class=\"chart spread\" data-chart=\"%s\" data-v0=\"%.2f\" data-scale=\"%v\" data-vmin=\"%v\" "
                  "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n",
                  c->id, v0, sc, c->vmin, width, height, width, height);
    y_axis(h, left, v0, sc, c->vmin, c->vmax, c->mul, left + c->n_groups * group);
    for (int g = 0; g < c->n_groups; g++) {
        double a = left + g * group + gap / 2;
        if (label_w > group)
            mieb_html_fmt(h,
                          "<text class=\"label\" transform=\"translate(%.2f,%.2f) rotate(-45)\" "
                          "text-anchor=\"end\">%s</text>\n",
                          a + c->n_series * strip / 2 + 3, v0 + 12, c->groups[g]);
        else
            mieb_html_fmt(h, "<text class=\"label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%s</text>\n",
                          a + c->n_series * strip / 2, v0 + 16, c->groups[g]);
        for (int s = 0; s < c->n_series; s++) {
            size_t cell = (size_t)s * c->n_groups + g;
            int n = c->n_vals[cell];
            const double *x = c->vals[cell];
            double mid = a + s * strip + strip / 2, lo = INFINITY, hi = -INFINITY, sum = 0;
            if (n == 0)
                continue;
            for (int i = 0; i < n; i++) {
                lo = fmin(lo, x[i]);
                hi = fmax(hi, x[i]);
                sum += x[i];
            }
            double mean = sum / n;
            mieb_svg_fmt_shown(mean * c->mul, 2, buf, sizeof buf);
            mieb_html_fmt(h,
                          "<line class=\"range\" data-series=\"%s\" data-label=\"%s\" x1=\"%.2f\" y1=\"%.2f\" "
                          "x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\"/>\n"
                          "<line class=\"mean\" data-series=\"%s\" data-label=\"%s\" data-value=\"%v\" x1=\"%.2f\" "
                          "y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\"><title>%s, %s: mean %s over %d</title>"
                          "</line>\n",
                          c->series[s].name, c->groups[g], mid, v0 - (lo - c->vmin) * sc, mid,
                          v0 - (hi - c->vmin) * sc, c->series[s].color, c->series[s].name, c->groups[g], mean,
                          mid - 6, v0 - (mean - c->vmin) * sc, mid + 6, v0 - (mean - c->vmin) * sc,
                          c->series[s].color, c->series[s].name, c->groups[g], buf, n);
            for (int i = 0; i < n; i++) {
                mieb_svg_fmt_shown(x[i] * c->mul, 2, buf, sizeof buf);
                mieb_html_fmt(h,
                              "<circle class=\"pt\" data-series=\"%s\" data-label=\"%s\" data-value=\"%v\" "
                              "cx=\"%.2f\" cy=\"%.2f\" r=\"2.5\" fill=\"%s\"><title>%s, %s, experiment %d: %s"
                              "</title></circle>\n",
                              c->series[s].name, c->groups[g], x[i], mid, v0 - (x[i] - c->vmin) * sc,
                              c->series[s].color, c->series[s].name, c->groups[g], i + 1, buf);
            }
        }
    }
    mieb_html_fmt(h, "</svg>\n");
}
