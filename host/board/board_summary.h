/**
 * board_summary.h - a board (board.h) as `mieb-eval summary` writes it: the table a person
 * reads (100 x score to 2 decimals, as the leaderboard shows it), and the exact values as CSV
 * (every task column) and JSON.
 */
#ifndef MIEB_BOARD_SUMMARY_H
#define MIEB_BOARD_SUMMARY_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "board.h"

/** The benchmark line and the table, rows in leaderboard order. */
void mieb_board_print_table(FILE *out, const struct mieb_board *b);
/** The table as CSV, written atomically. */
mieb_status mieb_board_write_csv(const struct mieb_board *b, const char *path);
/** The summary as JSON (`summary --json`'s document; the caller frees it), NULL when out of memory. */
cJSON *mieb_board_summary_json(const struct mieb_board *b);
/** That JSON, written atomically. */
mieb_status mieb_board_write_json(const struct mieb_board *b, const char *path);

#endif
