/**
 * report_ctx.h - what the report's section writers share (report_ctx.c): the page's context
 * (leaderboard, result documents, baseline, the models' series and colours, the HTML buffer),
 * a document by model and task, and the models' colour legend. The bottom of the report's
 * files: the heatmap, the sections and the page use it, and it uses none of them.
 */
#ifndef MIEB_REPORT_REPORT_CTX_H
#define MIEB_REPORT_REPORT_CTX_H

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
    const struct mieb_leaderboard *full; /* with published rows (report --published): every model, the
                                            ranks the page's placement card states; else NULL */
    const char *published;             /* the published folder, as given */
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

/** Above this many models, grouped bars and delta columns give way to heatmaps (unreadable past it). */
#define MIEB_REPORT_MAX_GROUPED 5

/** The document of series p (leaderboard position) and task t, or NULL. */
const cJSON *mieb_report_doc(const struct mieb_report_ctx *c, int p, int t);
/** The position (series index) of row i in leaderboard order. */
int mieb_report_pos(const struct mieb_leaderboard *lb, int i);
/** Whether row i is one of the caller's own models shown among published ones (report --published). */
bool mieb_report_own(const struct mieb_leaderboard *lb, int i);
/** A legend of the models' colours. */
void mieb_report_legend(struct mieb_report_ctx *c);

#endif
