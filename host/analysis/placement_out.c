/* placement_out.c - the placement as text lines after the summary table, and as JSON (see placement.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/escape.h"
#include "../core/pyfloat.h"
#include "../json/json_py.h"
#include "placement.h"

/* 100 x score, 2 decimals, as the table shows it. */
static double pct(double x) { return mieb_py_round(x * 100.0, 2); }

/* The value of an ordering as shown: a mean in percent, or Borda points as they are. */
static double shown(const struct mieb_lb_row *row, int k)
{
    double v = mieb_place_value(row, k);
    return k == MIEB_PLACE_BORDA ? v : pct(v);
}

/* "  above: NAME 47.43 (+0.04)" for one neighbour; nothing when there is none. */
static void neighbour(FILE *out, const struct mieb_leaderboard *lb, const char *side, int j, int r, int k)
{
    if (j < 0)
        return;
    double d = shown(&lb->rows[j], k) - shown(&lb->rows[r], k);
    mieb_fprintf_esc(out, "  %s: %s %.2f (%+.2f)", side, lb->rows[j].model->name, shown(&lb->rows[j], k), d + 0.0);
}

static void place_line(FILE *out, const struct mieb_leaderboard *lb, const char *label, const struct mieb_place *p, int r,
                       int k)
{
    mieb_fprintf_esc(out, "    %-28s ", label);
    if (!p->rank) {
        mieb_fprintf_esc(out, "not ranked (no value; %d models ranked)\n", p->n_ranked);
        return;
    }
    char rank[32];
    snprintf(rank, sizeof rank, "%d of %d", p->rank, p->n_ranked);
    mieb_fprintf_esc(out, "rank %-10s %7.2f", rank, shown(&lb->rows[r], k));
    neighbour(out, lb, "above", p->above, r, k);
    neighbour(out, lb, "below", p->below, r, k);
    mieb_fprintf_esc(out, "\n");
}

/* The tasks a run lacks and what that empties. */
static void missing_lines(FILE *out, const struct mieb_leaderboard *lb, const struct mieb_placement *p)
{
    const struct mieb_lb_row *row = &lb->rows[p->row];
    if (!p->n_missing)
        return;
    mieb_fprintf_esc(out, "    missing %d of %d tasks:", p->n_missing, lb->n_tasks);
    for (int t = 0; t < lb->n_tasks; t++)
        if (isnan(row->task_score[t]))
            mieb_fprintf_esc(out, " %s", lb->tasks[t]->name);
    mieb_fprintf_esc(out, "\n    so Mean(TaskType), Mean(Task) and the means of");
    for (int k = 0; k < lb->n_types; k++)
        if (isnan(row->type_mean[k]))
            mieb_fprintf_esc(out, " %s", lb->types[k]);
    mieb_fprintf_esc(out, " are empty; Borda counts the %d tasks scored\n", row->n_complete);
}

void mieb_placement_print(FILE *out, const struct mieb_leaderboard *lb, const struct mieb_placement *p, int n)
{
    int n_pub = 0;
    for (int i = 0; i < lb->n_models; i++)
        n_pub += lb->rows[i].published;
    for (int i = 0; i < n; i++) {
        const struct mieb_lb_row *row = &lb->rows[p[i].row];
        mieb_fprintf_esc(out, "\n%s (%s) among %d published model%s:\n", row->model->name, row->model->revision,
                         n_pub, n_pub == 1 ? "" : "s");
        place_line(out, lb, "Mean(TaskType)", &p[i].overall, p[i].row, MIEB_PLACE_MEAN);
        place_line(out, lb, "Borda (points)", &p[i].borda, p[i].row, MIEB_PLACE_BORDA);
        for (int k = 0; k < lb->n_types; k++)
            place_line(out, lb, lb->types[k], &p[i].type[k], p[i].row, k);
        missing_lines(out, lb, &p[i]);
    }
}

static cJSON *neighbour_json(const struct mieb_leaderboard *lb, int j, int r, int k)
{
    if (j < 0)
        return cJSON_CreateNull();
    double mine = mieb_place_value(&lb->rows[r], k), theirs = mieb_place_value(&lb->rows[j], k);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model", lb->rows[j].model->name);
    cJSON_AddStringToObject(o, "revision", lb->rows[j].model->revision);
    cJSON_AddItemToObject(o, "value", mieb_json_num_or_null(theirs));
    cJSON_AddItemToObject(o, "difference", mieb_json_num_or_null(theirs - mine));
    return o;
}

static cJSON *place_json(const struct mieb_leaderboard *lb, const struct mieb_place *p, int r, int k)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "rank", p->rank ? cJSON_CreateNumber(p->rank) : cJSON_CreateNull());
    cJSON_AddNumberToObject(o, "of", p->n_ranked);
    cJSON_AddItemToObject(o, "above", neighbour_json(lb, p->above, r, k));
    cJSON_AddItemToObject(o, "below", neighbour_json(lb, p->below, r, k));
    return o;
}

cJSON *mieb_placement_json(const struct mieb_leaderboard *lb, const struct mieb_placement *p, int n)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        const struct mieb_lb_row *row = &lb->rows[p[i].row];
        cJSON *o = cJSON_CreateObject(), *types = cJSON_CreateObject(), *missing = cJSON_CreateArray();
        cJSON_AddStringToObject(o, "model", row->model->name);
        cJSON_AddStringToObject(o, "revision", row->model->revision);
        cJSON_AddItemToObject(o, "Mean(TaskType)", place_json(lb, &p[i].overall, p[i].row, MIEB_PLACE_MEAN));
        cJSON_AddItemToObject(o, "Borda", place_json(lb, &p[i].borda, p[i].row, MIEB_PLACE_BORDA));
        for (int k = 0; k < lb->n_types; k++)
            cJSON_AddItemToObject(types, lb->types[k], place_json(lb, &p[i].type[k], p[i].row, k));
        cJSON_AddItemToObject(o, "task_types", types);
        for (int t = 0; t < lb->n_tasks; t++)
            if (isnan(row->task_score[t]))
                cJSON_AddItemToArray(missing, cJSON_CreateString(lb->tasks[t]->name));
        cJSON_AddItemToObject(o, "missing_tasks", missing);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}
