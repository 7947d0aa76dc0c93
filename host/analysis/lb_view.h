/**
 * lb_view.h - a readable part of a large leaderboard (report --published): the caller's own
 * rows and the first `top` published rows in leaderboard order. The view's rows are shallow
 * copies of the full leaderboard's (their scores, means and Borda ranks are the full
 * leaderboard's: computed over every model, Rank included), kept in input order. Tasks and
 * types are shared with the full leaderboard, which must outlive the view.
 */
#ifndef MIEB_ANALYSIS_LB_VIEW_H
#define MIEB_ANALYSIS_LB_VIEW_H

#include "../core/status.h"
#include "leaderboard.h"

/** *view: own rows and the first `top` published ones of *full (top < 0: every row). */
mieb_status mieb_lb_view(const struct mieb_leaderboard *full, int top, struct mieb_leaderboard *view);
/** Frees what mieb_lb_view allocated (not the shared rows' arrays). */
void mieb_lb_view_free(struct mieb_leaderboard *view);

#endif
