/* board_summary.c - the leaderboard as `summary` writes it: the table, CSV and JSON (board_summary.h). */
#include "board_summary.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/escape.h"
#include "../core/fileutil.h"
#include "../core/pyfloat.h"
#include "../io/csv.h"
#include "../json/json_py.h"

/* A number as Python's repr would print it, or "" for a missing value (CSV). */
static void fmt_num(double x, char *buf, size_t n)
{
    if (isnan(x))
        buf[0] = '\0';
    else
        mieb_py_repr(x, buf, n);
}

static void fmt_pct(double x, char *buf, size_t n)
{
    if (isnan(x))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.2f", mieb_py_round(x * 100.0, 2));
}

/* "own" or "published" when published rows are there (summary --published), else nothing. */
static const char *source(const struct mieb_leaderboard *lb, const struct mieb_lb_row *row)
{
    bool any = false;
    for (int i = 0; i < lb->n_models; i++)
        any |= lb->rows[i].published;
    return !any ? NULL : row->published ? "published" : "own";
}

static void print_rows(FILE *out, const struct mieb_leaderboard *lb, char *const *by)
{
    char b1[32], b2[32];
    size_t wname = 5, wrev = 8;
    const char *src = source(lb, &lb->rows[0]);
    for (int i = 0; i < lb->n_models; i++) {
        size_t l = mieb_escape(NULL, 0, lb->rows[i].model->name, (size_t)-1, MIEB_ESC_DISPLAY), /* as shown */
               r = mieb_escape(NULL, 0, lb->rows[i].model->revision, (size_t)-1, MIEB_ESC_DISPLAY);
        wname = l > wname ? l : wname;
        wrev = r > wrev ? r : wrev;
    }
    if (src)
        mieb_fprintf_esc(out, "%-9s  ", "Source");
    mieb_fprintf_esc(out, "%-4s  %-*s  %-*s  %14s  %10s  %11s  %9s", "Rank", (int)wname, "Model", (int)wrev, "Revision",
           "Mean(TaskType)", "Mean(Task)", "Rank(Borda)", "Tasks");
    for (int k = 0; k < lb->n_types; k++)
        mieb_fprintf_esc(out, "  %s", lb->types[k]);
    mieb_fprintf_esc(out, "  Produced by\n");
    for (int p = 0; p < lb->n_models; p++) {
        const struct mieb_lb_row *row = &lb->rows[lb->order[p]];
        char tasks[32], brank[16];
        fmt_pct(row->mean_task_type, b1, sizeof b1);
        fmt_pct(row->mean_task, b2, sizeof b2);
        snprintf(tasks, sizeof tasks, "%d/%d", row->n_complete, lb->n_tasks);
        if (row->borda_rank)
            snprintf(brank, sizeof brank, "%d", row->borda_rank);
        else
            snprintf(brank, sizeof brank, "-");
        if (src)
            mieb_fprintf_esc(out, "%-9s  ", source(lb, row));
        mieb_fprintf_esc(out, "%-4d  %-*s  %-*s  %14s  %10s  %11s  %9s", row->rank, (int)wname, row->model->name, (int)wrev,
               row->model->revision, b1, b2, brank, tasks);
        for (int k = 0; k < lb->n_types; k++) {
            fmt_pct(row->type_mean[k], b1, sizeof b1);
            mieb_fprintf_esc(out, "  %*s", (int)strlen(lb->types[k]), b1);
        }
        mieb_fprintf_esc(out, "  %s\n", by[lb->order[p]][0] ? by[lb->order[p]] : "-");
    }
}

mieb_status mieb_board_write_csv(const struct mieb_board *bd, const char *path)
{
    const struct mieb_leaderboard *lb = &bd->lb;
    char *const *by = bd->produced;
    struct mieb_buf b = {0};
    char num[40];
    mieb_status st = MIEB_OK;
    const char *fixed[] = {"Rank", "model", "revision", "Mean(TaskType)", "Mean(Task)", "Rank(Borda)",
                           "n_tasks_scored", "n_tasks"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed && st == MIEB_OK; i++)
        st = mieb_csv_field(&b, fixed[i], i == 0);
    for (int k = 0; k < lb->n_types && st == MIEB_OK; k++)
        st = mieb_csv_field(&b, lb->types[k], false);
    for (int t = 0; t < lb->n_tasks && st == MIEB_OK; t++)
        st = mieb_csv_field(&b, lb->tasks[t]->name, false);
    if (st == MIEB_OK)
        st = mieb_csv_field(&b, "produced_by", false);
    if (st == MIEB_OK && source(lb, &lb->rows[0]))
        st = mieb_csv_field(&b, "source", false);
    if (st == MIEB_OK)
        st = mieb_buf_append(&b, "\n", 1);
    for (int p = 0; p < lb->n_models && st == MIEB_OK; p++) {
        const struct mieb_lb_row *row = &lb->rows[lb->order[p]];
        snprintf(num, sizeof num, "%d", row->rank);
        st = mieb_csv_field(&b, num, true);
        if (st == MIEB_OK)
            st = mieb_csv_field(&b, row->model->name, false);
        if (st == MIEB_OK)
            st = mieb_csv_field(&b, row->model->revision, false);
        fmt_num(row->mean_task_type, num, sizeof num);
        if (st == MIEB_OK)
            st = mieb_csv_field(&b, num, false);
        fmt_num(row->mean_task, num, sizeof num);
        if (st == MIEB_OK)
            st = mieb_csv_field(&b, num, false);
        if (row->borda_rank)
            snprintf(num, sizeof num, "%d", row->borda_rank);
        else
            num[0] = '\0';
        if (st == MIEB_OK)
            st = mieb_csv_field(&b, num, false);
        snprintf(num, sizeof num, "%d", row->n_complete);
        if (st == MIEB_OK)
            st = mieb_csv_field(&b, num, false);
        snprintf(num, sizeof num, "%d", lb->n_tasks);
        if (st == MIEB_OK)
            st = mieb_csv_field(&b, num, false);
        for (int k = 0; k < lb->n_types && st == MIEB_OK; k++) {
            fmt_num(row->type_mean[k], num, sizeof num);
            st = mieb_csv_field(&b, num, false);
        }
        for (int t = 0; t < lb->n_tasks && st == MIEB_OK; t++) {
            fmt_num(row->task_score[t], num, sizeof num);
            st = mieb_csv_field(&b, num, false);
        }
        if (st == MIEB_OK)
            st = mieb_csv_field(&b, by[lb->order[p]], false);
        if (st == MIEB_OK && source(lb, row))
            st = mieb_csv_field(&b, source(lb, row), false);
        if (st == MIEB_OK)
            st = mieb_buf_append(&b, "\n", 1);
    }
    if (st == MIEB_OK)
        st = mieb_write_file_atomic(path, b.data ? b.data : "", b.len);
    mieb_buf_free(&b);
    return st;
}

cJSON *mieb_board_summary_json(const struct mieb_board *bd)
{
    const struct mieb_leaderboard *lb = &bd->lb;
    char *const *by = bd->produced;
    const char *bench = bd->bench ? bd->bench->name : NULL;
    cJSON *root = cJSON_CreateObject(), *models = cJSON_CreateArray(), *tasks = cJSON_CreateArray(),
          *types = cJSON_CreateArray();
    cJSON_AddItemToObject(root, "benchmark", bench ? cJSON_CreateString(bench) : cJSON_CreateNull());
    for (int t = 0; t < lb->n_tasks; t++)
        cJSON_AddItemToArray(tasks, cJSON_CreateString(lb->tasks[t]->name));
    for (int k = 0; k < lb->n_types; k++)
        cJSON_AddItemToArray(types, cJSON_CreateString(lb->types[k]));
    cJSON_AddItemToObject(root, "tasks", tasks);
    cJSON_AddItemToObject(root, "task_types", types);
    for (int p = 0; p < lb->n_models; p++) {
        const struct mieb_lb_row *row = &lb->rows[lb->order[p]];
        cJSON *m = cJSON_CreateObject(), *tm = cJSON_CreateObject(), *ts = cJSON_CreateObject(),
              *missing = cJSON_CreateArray();
        cJSON_AddNumberToObject(m, "Rank", row->rank);
        cJSON_AddStringToObject(m, "model", row->model->name);
        cJSON_AddStringToObject(m, "revision", row->model->revision);
        cJSON_AddStringToObject(m, "path", row->model->dir);
        if (source(lb, row))
            cJSON_AddStringToObject(m, "source", source(lb, row));
        const char *made = by[lb->order[p]];
        cJSON_AddItemToObject(m, "produced_by", made[0] ? cJSON_CreateString(made) : cJSON_CreateNull());
        cJSON_AddItemToObject(m, "Mean(TaskType)", mieb_json_num_or_null(row->mean_task_type));
        cJSON_AddItemToObject(m, "Mean(Task)", mieb_json_num_or_null(row->mean_task));
        cJSON_AddItemToObject(m, "Rank(Borda)",
                              row->borda_rank ? cJSON_CreateNumber(row->borda_rank) : cJSON_CreateNull());
        cJSON_AddItemToObject(m, "borda_points", mieb_json_num_or_null(row->borda_points));
        for (int k = 0; k < lb->n_types; k++)
            cJSON_AddItemToObject(tm, lb->types[k], mieb_json_num_or_null(row->type_mean[k]));
        for (int t = 0; t < lb->n_tasks; t++) {
            cJSON_AddItemToObject(ts, lb->tasks[t]->name, mieb_json_num_or_null(row->task_score[t]));
            if (isnan(row->task_score[t]))
                cJSON_AddItemToArray(missing, cJSON_CreateString(lb->tasks[t]->name));
        }
        cJSON_AddItemToObject(m, "task_types", tm);
        cJSON_AddItemToObject(m, "task_scores", ts);
        cJSON_AddItemToObject(m, "incomplete_tasks", missing);
        cJSON_AddItemToArray(models, m);
    }
    cJSON_AddItemToObject(root, "models", models);
    if (source(lb, &lb->rows[0]))
        cJSON_AddItemToObject(root, "placement", mieb_placement_json(lb, bd->place, bd->n_place));
    return root;
}

mieb_status mieb_board_write_json(const struct mieb_board *bd, const char *path)
{
    cJSON *root = mieb_board_summary_json(bd);
    char *text = root ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!text)
        return mieb_fail(MIEB_ERR_OOM, "summary JSON");
    mieb_status st = mieb_write_file_atomic(path, text, strlen(text));
    free(text);
    return st;
}

void mieb_board_print_table(FILE *out, const struct mieb_board *bd)
{
    mieb_fprintf_esc(out, "benchmark: %s (%d tasks, %d task types), %d model revisions\n",
                     bd->bench ? bd->bench->name : "(tasks found)", bd->n_tasks, bd->lb.n_types, bd->n_models);
    print_rows(out, &bd->lb, bd->produced);
    mieb_placement_print(out, &bd->full, bd->place, bd->n_place);
}

