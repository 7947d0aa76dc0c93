/**
 * svg_chart.h - inline SVG charts for the HTML report: grouped bars, a radar, lines on a
 * log-x axis (recall@k), a strip plot of spreads (linear-probe experiments) and
 * horizontal stacked bars (time per stage).
 *
 * Every drawn data point carries its exact value (data-value, Python repr) and its series
 * and label (data-series, data-label), and each <svg> carries the mapping from value to
 * pixels (data-v0: the pixel of value 0 or of the axis minimum, see each chart;
 * data-scale: pixels per unit), so a test can check both what is drawn and where.
 * Charts have no legend of their own: the page prints one per section (series colours).
 * Values are in the units given (scores in [0, 1]); axes and labels show value x `mul`.
 * All coordinates are in the viewBox's units: the page may scale a chart to its card
 * (CSS), which moves no data-* mapping.
 * NaN values are missing: nothing is drawn for them but a small "n/a" mark.
 */
#ifndef MIEB_REPORT_SVG_CHART_H
#define MIEB_REPORT_SVG_CHART_H

#include "html_writer.h"

/** One series (a model, or a stage of a stacked bar): its name and fill colour. */
struct mieb_svg_series {
    const char *name;
    const char *color;
};

/**
 * Grouped bars. Vertical: groups along x, values up; horizontal: groups down the left,
 * values to the right (long labels stay readable). Bars start at value 0 (clamped into
 * [vmin, vmax]): a bar spans pixels pos(min(0, v)) .. pos(max(0, v)) with
 * pos(v) = data-v0 -/+ (v - vmin) x data-scale (minus: vertical, y grows down).
 */
struct mieb_svg_bars {
    const char *id;                 /* data-chart */
    int horizontal;
    int n_groups;
    const char *const *groups;      /* group labels */
    int n_series;
    const struct mieb_svg_series *series;
    const double *v;                /* [n_series * n_groups]: v[s * n_groups + g] */
    double vmin, vmax, mul;         /* value axis range; shown values are v x mul */
    int value_labels;               /* print the shown value at the end of each bar */
    int decimals;                   /* of the value labels */
    double plot_len;                /* pixels of the value axis; 0: 560 (horizontal), 280 (vertical) */
    double fit_width;               /* horizontal: > 0 sets the chart's whole width, the value axis taking
                                       what the labels leave (plot_len ignored); the page then scales it
                                       to its card (class "fit") */
    double label_w;                 /* room for the group labels; 0: the widest label's */
};
void mieb_svg_bars(struct mieb_html *h, const struct mieb_svg_bars *c);

/**
 * Radar over n_axes axes (clockwise from the top); one polygon per series. A point of
 * value v lies at distance (v - vmin) / (vmax - vmin) x data-r from (data-cx, data-cy),
 * on axis k at angle 2 pi k / n_axes from the upward vertical.
 */
struct mieb_svg_radar {
    const char *id;
    int n_axes;
    const char *const *axes;
    int n_series;
    const struct mieb_svg_series *series;
    const double *v;                /* [n_series * n_axes] */
    double vmin, vmax, mul;
};
void mieb_svg_radar(struct mieb_html *h, const struct mieb_svg_radar *c);

/**
 * Lines over a log10 x axis (recall@k): series s has points (x[i], v[s * n_x + i]).
 * Pixel y = data-v0 - (v - vmin) x data-scale; pixel x = data-x0 + (log10(x) -
 * log10(x[0])) x data-xscale. x must be increasing and positive.
 */
struct mieb_svg_lines {
    const char *id;
    const char *title;              /* drawn above the plot (a task name) */
    int n_x;
    const double *x;
    int n_series;
    const struct mieb_svg_series *series;
    const double *v;                /* [n_series * n_x] */
    double vmin, vmax, mul;
};
void mieb_svg_lines(struct mieb_html *h, const struct mieb_svg_lines *c);

/**
 * Spread strips: per group (a task) and series (a model), the values of several
 * experiments as dots, a min-max line and a mean tick (data-value on it). Pixel y as in
 * mieb_svg_lines.
 */
struct mieb_svg_spread {
    const char *id;
    int n_groups;
    const char *const *groups;
    int n_series;
    const struct mieb_svg_series *series;
    const int *n_vals;              /* [n_series * n_groups]: how many values each cell has */
    const double *const *vals;      /* [n_series * n_groups]: the values of each cell */
    double vmin, vmax, mul;
};
void mieb_svg_spread(struct mieb_html *h, const struct mieb_svg_spread *c);

/**
 * Horizontal stacked bars: per row (a task), one segment per stage laid left to right;
 * a segment of value v spans data-scale x v pixels from where the previous one ended,
 * the first starting at data-v0. The row total is printed at the end (in seconds).
 */
struct mieb_svg_stack {
    const char *id;
    int n_rows;
    const char *const *rows;
    int n_segs;
    const struct mieb_svg_series *segs;
    const double *v;                /* [n_rows * n_segs]: v[r * n_segs + k] >= 0 */
    const char *unit;               /* axis unit, e.g. "s" */
    double vmax;                    /* axis end; 0: the largest row total (give several charts one scale) */
};
void mieb_svg_stack(struct mieb_html *h, const struct mieb_svg_stack *c);

/* ---- shared by the chart files (svg_common.c) ---- */

/** Tick step for a range shown as [lo, hi] (shown units): 1, 2 or 5 x 10^k, about 5 ticks. */
double mieb_svg_tick_step(double lo, double hi);
/** A rough width in pixels of `s` at the charts' 11 px font (for margins). */
double mieb_svg_text_width(const char *s);
/** Widest of n labels (mieb_svg_text_width). */
double mieb_svg_max_width(const char *const *s, int n);
/** A value shown on an axis or label: x with `decimals` decimals, trailing ".0"s kept. */
void mieb_svg_fmt_shown(double x, int decimals, char *buf, size_t n);

#endif
