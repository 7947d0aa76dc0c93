/* svg_stack.c - horizontal stacked bars: time per task, one segment per stage (see svg_chart.h). */
#include <math.h>
#include <stdio.h>

#include "svg_chart.h"

#define ROW 14.0
#define PLOT_LEN 620.0

void mieb_svg_stack(struct mieb_html *h, const struct mieb_svg_stack *c)
{
    const double label_w = mieb_svg_max_width(c->rows, c->n_rows), left = label_w + 16, top = 8;
    double vmax = 0.0;
    for (int r = 0; r < c->n_rows; r++) {
        double t = 0.0;
        for (int k = 0; k < c->n_segs; k++)
            t += c->v[(size_t)r * c->n_segs + k];
        vmax = fmax(vmax, t);
    }
    if (c->vmax > vmax)
        vmax = c->vmax;
    if (!(vmax > 0))
        vmax = 1.0;
    const double step = mieb_svg_tick_step(0.0, vmax), axis_max = ceil(vmax / step - 1e-9) * step;
    const double sc = PLOT_LEN / axis_max, bottom = top + c->n_rows * ROW;
    const double width = left + PLOT_LEN + 70, height = bottom + 34;
    char buf[48];
    mieb_html_fmt(h,
                  "<svg class=\"chart stack\" data-chart=\"%s\" data-v0=\"%.2f\" data-scale=\"%v\" width=\"%.0f\" "
                  "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n",
                  c->id, left, sc, width, height, width, height);
    for (int i = 0; i * step <= axis_max + 1e-12; i++) {
        double t = i * step, p = left + t * sc;
        mieb_html_fmt(h,
                      "<line class=\"grid\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>"
                      "<text class=\"tick\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%g</text>\n",
                      p, top - 2, p, bottom, p, bottom + 14, t);
    }
    mieb_html_fmt(h, "<text class=\"tick\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%s</text>\n",
                  left + PLOT_LEN / 2, bottom + 28, c->unit);
    for (int r = 0; r < c->n_rows; r++) {
        double y = top + r * ROW, at = left, total = 0.0;
        mieb_html_fmt(h, "<text class=\"label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">%s</text>\n", left - 6,
                      y + ROW - 3.5, c->rows[r]);
        for (int k = 0; k < c->n_segs; k++) {
            double v = c->v[(size_t)r * c->n_segs + k];
            total += v;
            if (!(v > 0))
                continue;
            mieb_html_fmt(h,
                          "<rect class=\"seg\" data-label=\"%s\" data-series=\"%s\" data-value=\"%v\" x=\"%.3f\" "
                          "y=\"%.2f\" width=\"%.3f\" height=\"%.2f\" fill=\"%s\"><title>%s, %s: %.4f %s</title>"
                          "</rect>\n",
                          c->rows[r], c->segs[k].name, v, at, y + 1, v * sc, ROW - 2, c->segs[k].color, c->rows[r],
                          c->segs[k].name, v, c->unit);
            at += v * sc;
        }
        snprintf(buf, sizeof buf, "%.3f", total);
        mieb_html_fmt(h, "<text class=\"val\" data-label=\"%s\" data-value=\"%v\" x=\"%.2f\" y=\"%.2f\">%s</text>\n",
                      c->rows[r], total, at + 4, y + ROW - 3.5, buf);
    }
    mieb_html_fmt(h, "</svg>\n");
}
