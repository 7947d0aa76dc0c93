/**
 * board_report.h - a board (board.h) as `mieb-eval report` writes it: one self-contained HTML
 * page (host/report/) with deltas against a baseline model.
 */
#ifndef MIEB_BOARD_REPORT_H
#define MIEB_BOARD_REPORT_H

#include "../report/report_ctx.h"
#include "board.h"

/**
 * The row of a model: want is its name or name@revision; with want NULL, the first model
 * whose folder lies under first_dir (the report's first folder), else row 0. -1 when want
 * names no model of the board.
 */
int mieb_board_find_model(const struct mieb_board *b, const char *want, const char *first_dir);

/**
 * The page over the board with deltas against row baseline, written atomically to path.
 * cmp and alpha: the --per-query comparisons against the baseline (analysis/compare.h), or
 * NULL; the rows' producers come from the board.
 */
mieb_status mieb_board_write_report(const struct mieb_board *b, int baseline, const struct mieb_cmp *const *cmp,
                                    double alpha, const char *path);

#endif
