/**
 * report_page.h - the self-contained HTML report page of `mieb-eval report`: summary
 * table, per-type bar charts and radar, per-task table with deltas against a baseline,
 * linear-probe spread, recall@k curves, per-language scores and time per task and stage.
 * Everything is inline (CSS, SVG); the page has no script and no external reference.
 */
#ifndef MIEB_REPORT_REPORT_PAGE_H
#define MIEB_REPORT_REPORT_PAGE_H

#include <cjson/cJSON.h>

#include "report_ctx.h"

/**
 * Write the whole page into h (check h->st afterwards). docs: mieb_report_data_docs_load's
 * matrix; baseline: a row index; ex (may be NULL): per row index, that model compared with the
 * baseline (the delta cells then show intervals and p-values), and what produced its results.
 */
mieb_status mieb_report_page(const struct mieb_leaderboard *lb, cJSON **docs, int baseline, const char *bench,
                             const struct mieb_report_extras *ex, struct mieb_html *h);

#endif
