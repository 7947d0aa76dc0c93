/* leaderboard.c - task scores, per-type means, Mean(TaskType), Mean(Task) and Borda ranks (see leaderboard.h). */
#include "leaderboard.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../emulation/npmath.h"

static bool task_has_subset(const struct mieb_task *t, const char *subset)
{
    for (int i = 0; i < t->n_subsets; i++)
        if (!strcmp(t->subsets[i], subset))
            return true;
    return false;
}

/*
 * The task score of one TaskResult under get_score() semantics (see above) and, in
 * *borda_score, the long-frame mean used for Borda (may be NULL).
 */
static double mieb_lb_task_score(const struct mieb_task *task, const struct mieb_task_result *tr, double *borda_score)
{
    /* values: kept entries' main_score plus a NaN per missing (split, subset), as
     * validate_and_filter_scores builds them; at most entries + splits x subsets. */
    int cap = tr->n_entries + task->n_splits * task->n_subsets + 1;
    double *v = malloc((size_t)cap * sizeof *v);
    int nv = 0;
    if (!v) {
        if (borda_score)
            *borda_score = NAN;
        return NAN;
    }
    for (int s = 0; s < task->n_splits; s++) {
        const char *split = task->splits[s];
        bool split_seen = false;
        for (int e = 0; e < tr->n_entries; e++)
            if (!strcmp(tr->entries[e].split, split))
                split_seen = true;
        if (!split_seen) { /* missing split: NaN for every subset */
            for (int k = 0; k < task->n_subsets; k++)
                v[nv++] = NAN;
            continue;
        }
        for (int e = 0; e < tr->n_entries; e++) {
            const struct mieb_result_entry *re = &tr->entries[e];
            if (strcmp(re->split, split) != 0)
                continue;
            bool keep = task->is_aggregate ? !strcmp(re->subset, "default") : task_has_subset(task, re->subset);
            if (keep)
                v[nv++] = re->main_score;
        }
        if (task->is_aggregate)
            continue; /* aggregates only have "default"; none is added when it is absent */
        for (int k = 0; k < task->n_subsets; k++) {
            bool seen = false;
            for (int e = 0; e < tr->n_entries && !seen; e++)
                seen = !strcmp(tr->entries[e].split, split) && !strcmp(tr->entries[e].subset, task->subsets[k]);
            if (!seen)
                v[nv++] = NAN;
        }
    }
    double score = nv > 0 ? mieb_np_mean(v, nv) : NAN; /* np.mean([]) is NaN */
    if (borda_score) {
        double sum = 0.0;
        int n = 0;
        for (int i = 0; i < nv; i++)
            if (!isnan(v[i])) {
                sum += v[i];
                n++;
            }
        *borda_score = n ? sum / n : NAN;
    }
    free(v);
    return score;
}

void mieb_leaderboard_free(struct mieb_leaderboard *lb)
{
    if (!lb)
        return;
    if (lb->rows)
        for (int i = 0; i < lb->n_models; i++) {
            free(lb->rows[i].task_score);
            free(lb->rows[i].borda_score);
            free(lb->rows[i].type_mean);
        }
    free(lb->rows);
    free(lb->order);
    free(lb->types);
    free(lb->task_type);
    memset(lb, 0, sizeof *lb);
}

static mieb_status setup_types(struct mieb_leaderboard *lb)
{
    lb->types = calloc((size_t)lb->n_tasks + 1, sizeof *lb->types);
    lb->task_type = calloc((size_t)lb->n_tasks + 1, sizeof *lb->task_type);
    if (!lb->types || !lb->task_type)
        return mieb_fail(MIEB_ERR_OOM, "leaderboard");
    for (int t = 0; t < lb->n_tasks; t++) {
        int k = 0;
        while (k < lb->n_types && strcmp(lb->types[k], lb->tasks[t]->type) != 0)
            k++;
        if (k == lb->n_types)
            lb->types[lb->n_types++] = lb->tasks[t]->type;
        lb->task_type[t] = k;
    }
    return MIEB_OK;
}

/* Task scores and the skipna=False means of one row. */
static void score_row(const struct mieb_leaderboard *lb, struct mieb_lb_row *row)
{
    const struct mieb_model_results *m = row->model;
    for (int t = 0; t < lb->n_tasks; t++) {
        row->task_score[t] = NAN;
        row->borda_score[t] = NAN;
        for (int i = 0; i < m->n_tasks; i++)
            if (!strcmp(m->tasks[i].task_name, lb->tasks[t]->name)) {
                row->task_score[t] = mieb_lb_task_score(lb->tasks[t], &m->tasks[i], &row->borda_score[t]);
                break; /* the first file of a task wins (files are read in name order) */
            }
        row->n_complete += !isnan(row->task_score[t]);
    }
    double all = 0.0, types_sum = 0.0;
    bool all_ok = true, types_ok = true;
    for (int t = 0; t < lb->n_tasks; t++) {
        all += row->task_score[t];
        all_ok &= !isnan(row->task_score[t]);
    }
    for (int k = 0; k < lb->n_types; k++) {
        double s = 0.0;
        int n = 0;
        bool ok = true;
        for (int t = 0; t < lb->n_tasks; t++)
            if (lb->task_type[t] == k) {
                s += row->task_score[t];
                ok &= !isnan(row->task_score[t]);
                n++;
            }
        row->type_mean[k] = ok && n ? s / n : NAN;
        types_sum += row->type_mean[k];
        types_ok &= !isnan(row->type_mean[k]);
    }
    row->mean_task = all_ok && lb->n_tasks ? all / lb->n_tasks : NAN;
    row->mean_task_type = types_ok && lb->n_types ? types_sum / lb->n_types : NAN;
}

/* Borda count over the rows that have at least one complete task score. */
static void borda(struct mieb_leaderboard *lb)
{
    int n_models = 0;
    for (int i = 0; i < lb->n_models; i++)
        n_models += lb->rows[i].n_complete > 0;
    for (int t = 0; t < lb->n_tasks; t++)
        for (int i = 0; i < lb->n_models; i++) {
            double x = lb->rows[i].borda_score[t];
            if (isnan(x) || lb->rows[i].n_complete == 0)
                continue;
            int greater = 0, equal = 0; /* average rank, descending: greater + (equal + 1) / 2 */
            for (int j = 0; j < lb->n_models; j++) {
                double y = lb->rows[j].borda_score[t];
                if (isnan(y) || lb->rows[j].n_complete == 0)
                    continue;
                greater += y > x;
                equal += y == x;
            }
            lb->rows[i].borda_points += n_models - (greater + (equal + 1) / 2.0);
        }
    for (int i = 0; i < lb->n_models; i++) {
        if (lb->rows[i].n_complete == 0)
            continue;
        int better = 0; /* rank(method="min", descending) */
        for (int j = 0; j < lb->n_models; j++)
            better += lb->rows[j].n_complete > 0 && lb->rows[j].borda_points > lb->rows[i].borda_points;
        lb->rows[i].borda_rank = better + 1;
    }
}

/* True when row i goes strictly before row j: Mean(TaskType) descending, missing last. */
static bool row_before(const struct mieb_leaderboard *lb, int i, int j)
{
    double x = lb->rows[i].mean_task_type, y = lb->rows[j].mean_task_type;
    if (isnan(x) != isnan(y))
        return !isnan(x);
    return !isnan(x) && x > y;
}

mieb_status mieb_leaderboard_compute(const struct mieb_task *const *tasks, int n_tasks,
                                     const struct mieb_model_results *models, int n_models,
                                     struct mieb_leaderboard *out)
{
    memset(out, 0, sizeof *out);
    out->n_tasks = n_tasks;
    out->tasks = (const struct mieb_task **)tasks;
    out->n_models = n_models;
    mieb_status st = setup_types(out);
    out->rows = calloc((size_t)n_models + 1, sizeof *out->rows);
    out->order = calloc((size_t)n_models + 1, sizeof *out->order);
    if (st == MIEB_OK && (!out->rows || !out->order))
        st = mieb_fail(MIEB_ERR_OOM, "leaderboard");
    for (int i = 0; st == MIEB_OK && i < n_models; i++) {
        struct mieb_lb_row *row = &out->rows[i];
        row->model = &models[i];
        row->task_score = calloc((size_t)n_tasks + 1, sizeof *row->task_score);
        row->borda_score = calloc((size_t)n_tasks + 1, sizeof *row->borda_score);
        row->type_mean = calloc((size_t)out->n_types + 1, sizeof *row->type_mean);
        if (!row->task_score || !row->borda_score || !row->type_mean)
            st = mieb_fail(MIEB_ERR_OOM, "leaderboard");
        else
            score_row(out, row);
    }
    if (st != MIEB_OK) {
        mieb_leaderboard_free(out);
        return st;
    }
    borda(out);
    for (int i = 0; i < n_models; i++) { /* stable insertion sort: ties keep input order */
        int p = i;
        while (p > 0 && row_before(out, i, out->order[p - 1])) {
            out->order[p] = out->order[p - 1];
            p--;
        }
        out->order[p] = i;
    }
    for (int p = 0; p < n_models; p++)
        out->rows[out->order[p]].rank = p + 1;
    return MIEB_OK;
}

mieb_status mieb_lb_pick_tasks(const struct mieb_registry *reg, const struct mieb_benchmark *b,
                               const struct mieb_model_results *m, int nm, const struct mieb_task ***out, int *n)
{
    *out = calloc((size_t)reg->n_tasks + 1, sizeof **out);
    *n = 0;
    if (!*out)
        return mieb_fail(MIEB_ERR_OOM, "leaderboard task set");
    if (b) {
        memcpy(*out, b->tasks, (size_t)b->n_tasks * sizeof **out);
        *n = b->n_tasks;
        return MIEB_OK;
    }
    for (int t = 0; t < reg->n_tasks; t++) {
        bool found = false;
        for (int i = 0; i < nm && !found; i++)
            for (int k = 0; k < m[i].n_tasks && !found; k++)
                found = !strcmp(m[i].tasks[k].task_name, reg->tasks[t].name);
        if (found)
            (*out)[(*n)++] = &reg->tasks[t];
    }
    return MIEB_OK;
}
