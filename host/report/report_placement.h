/**
 * report_placement.h - the report's card "Where your models stand" (report --published): each
 * own model's rank on Mean(TaskType) and on Borda among every model read (not only those the
 * page shows), the nearest published models above and below, and the tasks it lacks
 * (analysis/placement.h).
 */
#ifndef MIEB_REPORT_REPORT_PLACEMENT_H
#define MIEB_REPORT_REPORT_PLACEMENT_H

#include "report_ctx.h"

/** Writes the card when the page has published rows (c->ex.full); else nothing. */
void mieb_report_placement(struct mieb_report_ctx *c);

#endif
