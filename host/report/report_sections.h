/**
 * report_sections.h - the report sections read from whole result files (report_sections.c):
 * linear-probe spread, recall@k curves, per-language scores and time per task and stage.
 */
#ifndef MIEB_REPORT_REPORT_SECTIONS_H
#define MIEB_REPORT_REPORT_SECTIONS_H

#include "../core/status.h"
#include "report_ctx.h"

void mieb_report_probe(struct mieb_report_ctx *c);
void mieb_report_recall(struct mieb_report_ctx *c);
void mieb_report_languages(struct mieb_report_ctx *c);
mieb_status mieb_report_time(struct mieb_report_ctx *c);

#endif
