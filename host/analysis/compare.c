/* compare.c - paired bootstrap comparison of two --per-query folders (see compare.h). */
#include "compare.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fileutil.h"
#include "per_sample_reader.h"

const char *mieb_cmp_stat_name(enum mieb_bs_stat s)
{
    static const char *n[] = {"mean", "spearman", "pearson", "nmi"};
    return n[s];
}

void mieb_cmp_note(struct mieb_cmp *c, const char *task, int is_error, const char *fmt, ...)
{
    if (c->n_notes == c->cap_notes) {
        int cap = c->cap_notes ? 2 * c->cap_notes : 16;
        struct mieb_cmp_note *nn = realloc(c->notes, (size_t)cap * sizeof *nn);
        if (!nn) { /* out of memory for a note: count an error all the same */
            c->n_errors += is_error;
            return;
        }
        c->notes = nn;
        c->cap_notes = cap;
    }
    struct mieb_cmp_note *n = &c->notes[c->n_notes++];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n->reason, sizeof n->reason, fmt, ap);
    va_end(ap);
    n->task = task;
    n->is_error = is_error;
    c->n_errors += is_error;
}

/* Compare one task: read and pair its units in both folders, then bootstrap. */
static mieb_status compare_task(struct mieb_cmp *c, const struct mieb_registry *reg, const struct mieb_task *t)
{
    char p[2][PATH_MAX];
    bool has[2];
    for (int s = 0; s < 2; s++) {
        snprintf(p[s], sizeof p[s], "%s/%s", c->dir[s], t->name);
        has[s] = mieb_dir_exists(p[s]);
    }
    if (!has[0] || !has[1]) {
        mieb_cmp_note(c, t->name, 0, "%s", !has[0] && !has[1] ? "in neither folder" : has[0] ? "only in A" : "only in B");
        return MIEB_OK;
    }
    /* an aggregate's units are its sub-task's subsets (aggregate.tsv marks that it was run) */
    const struct mieb_task *src = t->is_aggregate ? mieb_registry_find(reg, t->aggregate_of) : t;
    if (!src) {
        mieb_cmp_note(c, t->name, 1, "aggregate of %s, which is not in the registry", t->aggregate_of);
        return MIEB_OK;
    }
    int is_ret = src->family == MIEB_FAMILY_RETRIEVAL, nu = t->n_splits * t->n_subsets;
    struct mieb_psr_unit *ua = calloc((size_t)(nu > 0 ? nu : 1), sizeof *ua), *ub = calloc((size_t)(nu > 0 ? nu : 1), sizeof *ub);
    struct mieb_bs_unit *bu = calloc((size_t)(nu > 0 ? nu : 1), sizeof *bu);
    mieb_status st = ua && ub && bu ? MIEB_OK : mieb_fail(MIEB_ERR_OOM, "compare %s", t->name);
    bool ok = st == MIEB_OK && nu > 0;
    if (st == MIEB_OK && nu == 0)
        mieb_cmp_note(c, t->name, 1, "the registry lists no split or subset");
    int64_t total = 0;
    for (int k = 0; ok && k < nu; k++) {
        const char *split = t->splits[k / t->n_subsets], *subset = t->subsets[k % t->n_subsets];
        char f[2][PATH_MAX + 512];
        for (int s = 0; s < 2; s++)
            snprintf(f[s], sizeof f[s], "%s/%s/%s/%s/%s", c->dir[s], src->name, split, subset,
                     mieb_psr_file_name(is_ret));
        if (!mieb_file_exists(f[0]) || !mieb_file_exists(f[1])) {
            mieb_cmp_note(c, t->name, 0, "incomplete: %s lacks %s", !mieb_file_exists(f[0]) ? "A" : "B", f[!mieb_file_exists(f[0]) ? 0 : 1]);
            ok = false;
            break;
        }
        mieb_status rs = mieb_psr_read(f[0], is_ret, t->main_score, &ua[k]);
        if (rs == MIEB_OK)
            rs = mieb_psr_read(f[1], is_ret, t->main_score, &ub[k]);
        if (rs == MIEB_OK)
            rs = mieb_psr_pair(&ua[k], &ub[k], f[0], f[1]);
        if (rs == MIEB_ERR_OOM) {
            st = rs;
            ok = false;
        } else if (rs != MIEB_OK) {
            mieb_cmp_note(c, t->name, rs != MIEB_ERR_UNSUPPORTED, "%s", mieb_last_error());
            ok = false;
        } else {
            bu[k] = (struct mieb_bs_unit){ua[k].stat, ua[k].n, mieb_psr_side(&ua[k]), mieb_psr_side(&ub[k])};
            total += ua[k].n;
        }
    }
    if (ok) {
        struct mieb_cmp_row *r = &c->rows[c->n_rows];
        *r = (struct mieb_cmp_row){.task = t, .kind = "task", .name = t->name, .type = t->type, .stat = bu[0].stat,
                          .n_units = nu, .n_samples = total};
        st = mieb_bs_task(&c->rs, bu, nu, c->R, c->alpha, &r->res);
        if (st == MIEB_OK)
            c->n_rows++;
        else
            mieb_fail_context(st, "task %s", t->name);
    }
    for (int k = 0; ua && ub && k < nu; k++)
        mieb_psr_unit_free(&ua[k]), mieb_psr_unit_free(&ub[k]);
    free(ua), free(ub), free(bu);
    return st;
}

/* Per task type (first-appearance order), then Mean(Task) and Mean(TaskType). */
static mieb_status add_aggregates(struct mieb_cmp *c)
{
    int nt = c->n_task_rows = c->n_rows;
    if (nt == 0)
        return MIEB_OK;
    const struct mieb_bs_result **parts = malloc((size_t)nt * sizeof *parts);
    if (!parts)
        return mieb_fail(MIEB_ERR_OOM, "compare aggregates");
    mieb_status st = MIEB_OK;
    int first_type = c->n_rows;
    for (int i = 0; i < nt && st == MIEB_OK; i++) {
        bool seen = false;
        for (int k = first_type; k < c->n_rows && !seen; k++)
            seen = !strcmp(c->rows[k].type, c->rows[i].type);
        if (seen)
            continue;
        int m = 0;
        int64_t ns = 0;
        for (int j = i; j < nt; j++)
            if (!strcmp(c->rows[j].type, c->rows[i].type)) {
                parts[m++] = &c->rows[j].res;
                ns += c->rows[j].n_samples;
            }
        struct mieb_cmp_row *r = &c->rows[c->n_rows];
        *r = (struct mieb_cmp_row){.kind = "type", .name = c->rows[i].type, .type = c->rows[i].type, .n_units = m,
                          .n_samples = ns};
        if ((st = mieb_bs_mean_of(parts, m, c->alpha, &r->res)) == MIEB_OK)
            c->n_rows++;
    }
    int n_types = c->n_rows - first_type;
    int64_t ns = 0;
    for (int j = 0; j < nt; j++)
        ns += c->rows[j].n_samples;
    for (int k = 0; k < 2 && st == MIEB_OK; k++) {
        int m = k == 0 ? nt : n_types, base = k == 0 ? 0 : first_type;
        for (int j = 0; j < m; j++)
            parts[j] = &c->rows[base + j].res;
        struct mieb_cmp_row *r = &c->rows[c->n_rows];
        *r = (struct mieb_cmp_row){.kind = "mean", .name = k == 0 ? "Mean(Task)" : "Mean(TaskType)", .type = "", .n_units = m,
                          .n_samples = ns};
        if ((st = mieb_bs_mean_of(parts, m, c->alpha, &r->res)) == MIEB_OK)
            c->n_rows++;
    }
    free(parts);
    return st;
}

bool mieb_cmp_significant(const struct mieb_cmp_row *r, double alpha) { return !isnan(r->res.p_value) && r->res.p_value < alpha; }


mieb_status mieb_cmp_run(struct mieb_cmp *c, const struct mieb_registry *reg, const struct mieb_task *const *tasks,
                         int n, const char *a, const char *b, int64_t R, double alpha, uint32_t seed)
{
    *c = (struct mieb_cmp){.dir = {a, b}, .R = R, .alpha = alpha};
    c->rows = calloc((size_t)n * 2 + 4, sizeof *c->rows); /* tasks, types, the two means */
    if (!c->rows)
        return mieb_fail(MIEB_ERR_OOM, "compare");
    mieb_rs_seed(&c->rs, seed);
    mieb_status st = MIEB_OK;
    for (int i = 0; i < n && st == MIEB_OK; i++) {
        bool dup = false; /* a task named twice is compared once */
        for (int j = 0; j < i && !dup; j++)
            dup = tasks[j] == tasks[i];
        if (!dup)
            st = compare_task(c, reg, tasks[i]);
    }
    return st == MIEB_OK ? add_aggregates(c) : st;
}

const struct mieb_cmp_row *mieb_cmp_find(const struct mieb_cmp *c, const char *kind, const char *name)
{
    for (int i = 0; i < c->n_rows; i++)
        if (!strcmp(c->rows[i].kind, kind) && !strcmp(c->rows[i].name, name))
            return &c->rows[i];
    return NULL;
}

void mieb_cmp_free(struct mieb_cmp *c)
{
    for (int i = 0; c->rows && i < c->n_rows; i++)
        mieb_bs_result_free(&c->rows[i].res);
    free(c->rows);
    free(c->notes);
    c->rows = NULL;
    c->notes = NULL;
    c->n_rows = c->n_notes = 0;
}
