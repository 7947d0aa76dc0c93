/**
 * board.h - the leaderboard of result folders, as `summary` and `report` show it: the
 * benchmark's task list (or every task found), every model revision found under the folders,
 * their leaderboard rows (analysis/leaderboard.h) and what produced each (plan/manifest.h).
 * The program's summary and report (cli/cmd_summary.c, cmd_report.c) and the public API
 * (api/api_board.c) are its clients: board_summary.h writes its table, CSV and JSON,
 * board_report.h its HTML page.
 */
#ifndef MIEB_BOARD_H
#define MIEB_BOARD_H

#include <cjson/cJSON.h>

#include "../analysis/leaderboard.h"
#include "../config/registry.h"
#include "../results/results_reader.h"

struct mieb_board {
    const struct mieb_benchmark *bench; /* NULL: every registry task found */
    struct mieb_model_results *models;
    int n_models;
    int n_bad;                          /* result files that could not be read (each logged) */
    const struct mieb_task **tasks;
    int n_tasks;
    struct mieb_leaderboard lb;
    char **produced;                    /* [n_models] by row index: the tool and precision ("" unknown) */
    cJSON **docs;                       /* with_docs: [n_models * n_tasks] result documents (report) */
    int unknown_benchmark;              /* open failed on the benchmark's name: a usage error */
};

/**
 * Read the folders into a board over the benchmark (NULL: every registry task found), with
 * the result documents when with_docs (the report draws from them). Statuses: INVALID_ARG
 * with unknown_benchmark set (the registry's message), NOT_FOUND when a folder is missing or
 * holds no result file, another for what could not be read at all. mieb_board_free follows
 * either way.
 */
mieb_status mieb_board_open(struct mieb_board *b, const struct mieb_registry *reg, const char *benchmark,
                            const char *const *dirs, int n_dirs, int with_docs);
void mieb_board_free(struct mieb_board *b);

#endif
