/**
 * report_heatmap.h - score tables coloured by each score's place in its row (report_heatmap.c).
 */
#ifndef MIEB_REPORT_REPORT_HEATMAP_H
#define MIEB_REPORT_REPORT_HEATMAP_H

#include "report_ctx.h"

/** A heatmap row: a label and one score per model (leaderboard position), or a group heading (v NULL). */
struct mieb_heat_row {
    const char *label;
    const double *v; /* [n_models], NaN where missing; NULL: a heading row */
    int total;       /* drawn as a total (Mean rows) */
};
/**
 * A table of rows x models whose cells are coloured by their place between the row's lowest and
 * highest score (the light and the dark end), the highest marked; the values are printed as
 * 100 x score with 1 decimal (2 in each cell's tooltip) and carried in data-value (report_heatmap.c).
 */
void mieb_report_heatmap(struct mieb_report_ctx *c, const char *id, const struct mieb_heat_row *rows, int n_rows);

#endif
