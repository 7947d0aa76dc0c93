/**
 * report_page.h - the self-contained HTML report page of `mieb-eval report`: summary
 * table, per-type bar charts and radar, per-task table with deltas against a baseline,
 * linear-probe spread, recall@k curves, per-language scores and time per task and stage.
 * Everything is inline (CSS, SVG); the page has no script and no external reference.
 */
#ifndef MIEB_REPORT_REPORT_PAGE_H
#define MIEB_REPORT_REPORT_PAGE_H

#include <cjson/cJSON.h>

#include "../analysis/compare.h"
#include "../analysis/leaderboard.h"
#include "html_writer.h"
#include "svg_chart.h"

/** What the page shows beyond the result files (every pointer may be NULL). */
struct mieb_report_extras {
    const struct mieb_cmp *const *cmp; /* [n_models] by row index: the model against the baseline from
                                          --per-query folders (compare.h), or NULL */
    double alpha;                      /* '*' marks p < alpha */
    const char *const *produced_by;    /* [n_models] by row index: tool and precision ("" unknown) */
};

/** What the section writers share. Series are in leaderboard order: series[p] is row order[p]. */
struct mieb_report_ctx {
    const struct mieb_leaderboard *lb;
    cJSON **docs;                    /* [n_models * n_tasks], by row index (report_data.h) */
    int baseline;                    /* row index of the model deltas are taken against */
    const char *bench;               /* benchmark name, or NULL */
    struct mieb_svg_series *series;  /* [n_models] name (unique label) and colour */
    struct mieb_html *h;
    struct mieb_report_extras ex;
};

/**
 * Write the whole page into h (check h->st afterwards). docs: mieb_rp_docs_load's
 * matrix; baseline: a row index; ex (may be NULL): per row index, that model compared with the
 * baseline (the delta cells then show intervals and p-values), and what produced its results.
 */
mieb_status mieb_report_page(const struct mieb_leaderboard *lb, cJSON **docs, int baseline, const char *bench,
                             const struct mieb_report_extras *ex, struct mieb_html *h);

/** Above this many models, grouped bars and delta columns give way to heatmaps (unreadable past it). */
#define MIEB_REPORT_MAX_GROUPED 5

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

/* ---- sections (report_sections.c) ---- */
void mieb_report_probe(struct mieb_report_ctx *c);
void mieb_report_recall(struct mieb_report_ctx *c);
void mieb_report_languages(struct mieb_report_ctx *c);
mieb_status mieb_report_time(struct mieb_report_ctx *c);

/* ---- helpers shared by the section files (report_page.c) ---- */
/** The document of series p (leaderboard position) and task t, or NULL. */
const cJSON *mieb_report_doc(const struct mieb_report_ctx *c, int p, int t);
/** A legend of the models' colours. */
void mieb_report_legend(struct mieb_report_ctx *c);

#endif
