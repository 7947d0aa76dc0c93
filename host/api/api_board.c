/* api_board.c - mieb_summary and mieb_report (include/mieb.h): the library's board
   (board/board.h) over the engine's registry, as the program's summary and report. */
#define _GNU_SOURCE 1 /* open_memstream */
#include <stdio.h>
#include <stdlib.h>

#include "../board/board_report.h"
#include "../board/board_summary.h"
#include "api_engine.h"

static mieb_status check(const char *const *folders, int n_folders)
{
    if (n_folders < 1 || !folders)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "name at least one result folder");
    for (int i = 0; i < n_folders; i++)
        if (!folders[i] || !folders[i][0])
            return mieb_fail(MIEB_ERR_INVALID_ARG, "result folder %d is empty", i);
    return MIEB_OK;
}

/* The table as the program prints it, into a string of its own. */
static mieb_status table_text(const struct mieb_board *bd, char **out)
{
    size_t n = 0;
    FILE *f = open_memstream(out, &n);
    if (!f)
        return mieb_fail(MIEB_ERR_OOM, "the summary's table");
    mieb_board_print_table(f, bd);
    if (fclose(f) != 0) {
        free(*out);
        *out = NULL;
        return mieb_fail(MIEB_ERR_OOM, "the summary's table");
    }
    return MIEB_OK;
}

static mieb_status summary(mieb_engine *e, const char *const *folders, int n_folders,
                           const struct mieb_board_opts *bo, const char *csv_path, const char *json_path,
                           char **text, char **json, int *n_bad)
{
    struct mieb_board bd;
    MIEB_TRY(check(folders, n_folders));
    mieb_status st = mieb_board_open(&bd, &e->reg, bo, folders, n_folders);
    if (st == MIEB_OK)
        st = table_text(&bd, text);
    if (st == MIEB_OK) {
        cJSON *doc = mieb_board_summary_json(&bd);
        *json = doc ? cJSON_Print(doc) : NULL;
        cJSON_Delete(doc);
        if (!*json)
            st = mieb_fail(MIEB_ERR_OOM, "the summary's JSON");
    }
    if (st == MIEB_OK && csv_path && (st = mieb_board_write_csv(&bd, csv_path)) != MIEB_OK)
        mieb_fail_context(st, "%s", csv_path);
    if (st == MIEB_OK && json_path && (st = mieb_board_write_json(&bd, json_path)) != MIEB_OK)
        mieb_fail_context(st, "%s", json_path);
    *n_bad = bd.n_bad;
    mieb_board_free(&bd);
    return st;
}

int mieb_summary(mieb_engine *e, const char *const *folders, int n_folders, const char *benchmark,
                 const char *published, const char *csv_path, const char *json_path, char **table_text_out,
                 char **summary_json, int *n_unreadable)
{
    *table_text_out = *summary_json = NULL;
    *n_unreadable = 0;
    struct mieb_board_opts bo = {.benchmark = benchmark, .published = published, .top = -1};
    mieb_status st = mieb_api_call_begin(e);
    if (st == MIEB_OK)
        st = summary(e, folders, n_folders, &bo, csv_path, json_path, table_text_out, summary_json, n_unreadable);
    if (st != MIEB_OK) {
        free(*table_text_out);
        free(*summary_json);
        *table_text_out = *summary_json = NULL;
    }
    return mieb_api_call_end(e, st);
}

static mieb_status report(mieb_engine *e, const char *const *folders, int n_folders,
                          const struct mieb_board_opts *bo, const char *baseline, const char *html_path, int *n_bad)
{
    struct mieb_board bd;
    MIEB_TRY(check(folders, n_folders));
    if (!html_path || !html_path[0])
        return mieb_fail(MIEB_ERR_INVALID_ARG, "the report needs a file to write");
    mieb_status st = mieb_board_open(&bd, &e->reg, bo, folders, n_folders);
    int base = st == MIEB_OK ? mieb_board_find_model(&bd, baseline, folders[0]) : 0;
    if (st == MIEB_OK && base < 0)
        st = mieb_fail(MIEB_ERR_INVALID_ARG, "baseline %s: no such model in the result folders", baseline);
    if (st == MIEB_OK && (st = mieb_board_write_report(&bd, base, NULL, 0.05, html_path)) != MIEB_OK)
        mieb_fail_context(st, "%s", html_path);
    *n_bad = bd.n_bad;
    mieb_board_free(&bd);
    return st;
}

int mieb_report(mieb_engine *e, const char *const *folders, int n_folders, const char *benchmark,
                const char *baseline, const char *published, int top, const char *html_path, int *n_unreadable)
{
    *n_unreadable = 0;
    struct mieb_board_opts bo = {.benchmark = benchmark, .published = published, .top = top, .with_docs = 1};
    mieb_status st = mieb_api_call_begin(e);
    if (st == MIEB_OK)
        st = report(e, folders, n_folders, &bo, baseline, html_path, n_unreadable);
    return mieb_api_call_end(e, st);
}
