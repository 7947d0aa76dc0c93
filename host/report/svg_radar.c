/* svg_radar.c - radar chart over task types, one polygon per model (see svg_chart.h). */
#include <math.h>
#include <stdio.h>

#include "svg_chart.h"

#define R 150.0

static void axis_point(int k, int n, double frac, double cx, double cy, double *x, double *y)
{
    double a = 2.0 * M_PI * k / n; /* clockwise from the top */
    *x = cx + frac * R * sin(a);
    *y = cy - frac * R * cos(a);
}

void mieb_svg_radar(struct mieb_html *h, const struct mieb_svg_radar *c)
{
    const double span = c->vmax - c->vmin;
    /* room for the labels: each sits 10 px beyond its axis end, anchored away from the centre */
    double left = R + 10, right = R + 10;
    for (int k = 0; k < c->n_axes; k++) {
        double dx = (R + 10) * sin(2.0 * M_PI * k / c->n_axes), w = mieb_svg_text_width(c->axes[k]);
        double l = dx < -1 ? -dx + w : dx > 1 ? -dx : w / 2 - dx, r = dx > 1 ? dx + w : dx < -1 ? dx : w / 2 + dx;
        left = fmax(left, l);
        right = fmax(right, r);
    }
    const double cx = left + 14, cy = R + 30, width = cx + right + 14, height = 2 * cy;
    const double step = mieb_svg_tick_step(c->vmin * c->mul, c->vmax * c->mul);
    char buf[48];
    mieb_html_fmt(h,
                  "<svg class=\"chart radar fit\" data-chart=\"%s\" data-cx=\"%.2f\" data-cy=\"%.2f\" data-r=\"%.2f\" "
                  "data-vmin=\"%v\" data-vmax=\"%v\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                  "role=\"img\">\n",
                  c->id, cx, cy, R, c->vmin, c->vmax, width, height, width, height);
    /* rings at the ticks, spokes and axis labels */
    for (double t = ceil(c->vmin * c->mul / step - 1e-9) * step; t <= c->vmax * c->mul + 1e-9; t += step) {
        double f = (t / c->mul - c->vmin) / span;
        if (f <= 0)
            continue;
        mieb_html_fmt(h, "<polygon class=\"ring\" points=\"");
        for (int k = 0; k < c->n_axes; k++) {
            double x, y;
            axis_point(k, c->n_axes, f, cx, cy, &x, &y);
            mieb_html_fmt(h, "%.2f,%.2f ", x, y);
        }
        mieb_svg_fmt_shown(t, step < 1 ? 1 : 0, buf, sizeof buf);
        /* ring values just inside the ring, right of the upward axis */
        mieb_html_fmt(h, "\"/><text class=\"tick\" x=\"%.2f\" y=\"%.2f\">%s</text>\n", cx + 3, cy - f * R + 11, buf);
    }
    for (int k = 0; k < c->n_axes; k++) {
        double x, y, lx, ly;
        axis_point(k, c->n_axes, 1.0, cx, cy, &x, &y);
        axis_point(k, c->n_axes, 1.0 + 10.0 / R, cx, cy, &lx, &ly);
        const char *anchor = lx > cx + 1 ? "start" : lx < cx - 1 ? "end" : "middle";
        mieb_html_fmt(h,
                      "<line class=\"grid\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>"
                      "<text class=\"label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"%R\">%s</text>\n",
                      cx, cy, x, y, lx, ly + (ly > cy + 1 ? 10 : ly < cy - 1 ? -2 : 4), anchor, c->axes[k]);
    }
    for (int s = 0; s < c->n_series; s++) {
        const double *v = c->v + (size_t)s * c->n_axes;
        mieb_html_fmt(h, "<polygon class=\"radar-area\" data-series=\"%s\" fill=\"%s\" stroke=\"%s\" points=\"",
                      c->series[s].name, c->series[s].color, c->series[s].color);
        for (int k = 0; k < c->n_axes; k++) { /* a missing value is skipped: the polygon joins its neighbours */
            double x, y;
            if (isnan(v[k]))
                continue;
            axis_point(k, c->n_axes, (v[k] - c->vmin) / span, cx, cy, &x, &y);
            mieb_html_fmt(h, "%.2f,%.2f ", x, y);
        }
        mieb_html_fmt(h, "\"/>\n");
        for (int k = 0; k < c->n_axes; k++) {
            double x, y;
            if (isnan(v[k]))
                continue;
            axis_point(k, c->n_axes, (v[k] - c->vmin) / span, cx, cy, &x, &y);
            mieb_svg_fmt_shown(v[k] * c->mul, 2, buf, sizeof buf);
            mieb_html_fmt(h,
                          "<circle class=\"pt\" data-series=\"%s\" data-label=\"%s\" data-value=\"%v\" "
                          "cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"%s\"><title>%s, %s: %s</title></circle>\n",
                          c->series[s].name, c->axes[k], v[k], x, y, c->series[s].color, c->series[s].name,
                          c->axes[k], buf);
        }
    }
    mieb_html_fmt(h, "</svg>\n");
}
