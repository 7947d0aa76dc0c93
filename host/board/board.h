/**
 * board.h - the leaderboard of result folders, as `summary` and `report` show it: the
 * benchmark's task list (or every task found), every model revision found under the folders
 * (with --published, the published models too, ranked together with the caller's as mteb's
 * aggregation of one folder would rank them), their leaderboard rows (analysis/leaderboard.h),
 * where each own model stands (analysis/placement.h) and what produced each row
 * (plan/manifest.h). The program's summary and report (cli/cmd_summary.c, cmd_report.c) and
 * the public API (api/api_board.c) are its clients: board_summary.h writes its table, CSV and
 * JSON, board_report.h its HTML page.
 */
#ifndef MIEB_BOARD_H
#define MIEB_BOARD_H

#include <cjson/cJSON.h>

#include "../analysis/leaderboard.h"
#include "../analysis/placement.h"
#include "../config/registry.h"
#include "../results/results_reader.h"

/** What a board reads and keeps. */
struct mieb_board_opts {
    const char *benchmark; /* its task list; NULL: every registry task found */
    const char *published; /* a folder of published results to rank the own models among, or NULL */
    int top;               /* the published rows shown (the report's --top); < 0: every row */
    int with_docs;         /* keep the shown rows' result documents (the report draws from them) */
};

struct mieb_board {
    const struct mieb_benchmark *bench;  /* NULL: every registry task found */
    const char *published;               /* as in the options */
    struct mieb_model_results *models;   /* the own models first, then the published ones */
    int n_models, n_own;
    int n_bad;                           /* result files that could not be read (each logged) */
    const struct mieb_task **tasks;
    int n_tasks;
    struct mieb_leaderboard full;        /* every row, own and published (published rows marked) */
    struct mieb_leaderboard lb;          /* the rows shown: the own ones and the `top` best published
                                            ones, a view of full (analysis/lb_view.h) */
    struct mieb_placement *place;        /* with published: each own row's standing in full */
    int n_place;
    char **produced;                     /* [lb.n_models] by row: the tool and precision ("" unknown) */
    cJSON **docs;                        /* with_docs: [lb.n_models * n_tasks] result documents */
    int unknown_benchmark;               /* open failed on the benchmark's name: a usage error */
};

/**
 * Read the folders into a board. Statuses: INVALID_ARG with unknown_benchmark set (the
 * registry's message), NOT_FOUND when a folder is missing or holds no result file, another for
 * what could not be read at all. mieb_board_free follows either way.
 */
mieb_status mieb_board_open(struct mieb_board *b, const struct mieb_registry *reg, const struct mieb_board_opts *o,
                            const char *const *dirs, int n_dirs);
void mieb_board_free(struct mieb_board *b);

#endif
