/* api_score.c - mieb_score_task (include/mieb.h): one task scored by `run`'s own loop
   (plan/run_loop.h), its roles read from the caller's arrays instead of embedding files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fileutil.h"
#include "../plan/run_loop.h"
#include "api_engine.h"
#include "api_hooks.h"

static mieb_status memory_roles(const struct mieb_role_array *roles, int n, const char *task,
                                struct mieb_emb_memory *mem)
{
    for (int i = 0; i < n; i++) {
        const struct mieb_role_array *r = &roles[i];
        if (!r->split || !r->subset || !r->role)
            return mieb_fail(MIEB_ERR_INVALID_ARG, "%s: role array %d lacks its split, subset or role name", task, i);
        mem[i] = mieb_api_memory_role(&r->emb, r->offsets, r->row_index, task, r->split, r->subset, r->role);
    }
    return MIEB_OK;
}

/* Score the one task into results_dir; the task's failure is the call's. */
static mieb_status score(mieb_engine *e, const struct mieb_task_list *todo, const char *task_data,
                         const struct mieb_emb_source *src, enum mieb_sim sim, const char *results_dir)
{
    struct mieb_run_ctx rc = mieb_api_run_ctx(e, src, sim);
    struct mieb_manifest man = {0}; /* no manifest: the caller keeps the provenance */
    struct mieb_api_call call = mieb_api_call(e);
    struct mieb_run_plan plan = {.reg = &e->reg, .rc = &rc, .task_data = task_data, .results_dir = results_dir,
                                 .overwrite = "always", .precision = "fp32", .man = &man,
                                 .hooks = &mieb_api_loop_hooks, .hooks_user = &call};
    struct mieb_outcomes oc = {0};
    int failed = 0, fatal = 0;
    MIEB_TRY(mieb_mkdirs(results_dir));
    mieb_run_plan_score(&plan, todo, &oc, &failed, &fatal);
    mieb_status st = MIEB_OK;
    if (e->interrupted)
        st = mieb_fail(MIEB_ERR_INTERRUPTED, "interrupted");
    else if (failed)
        st = mieb_fail(oc.n && oc.v[0].status != MIEB_OK ? oc.v[0].status : MIEB_ERR_INTERNAL, "%s",
                       oc.n && oc.v[0].note ? oc.v[0].note : "the task failed");
    mieb_outcomes_free(&oc);
    return st;
}

static mieb_status score_task(mieb_engine *e, const char *task, const char *task_data,
                              const struct mieb_role_array *roles, int n_roles, int32_t similarity,
                              const char *results_dir, char **json_out)
{
    enum mieb_sim sim;
    struct mieb_task_list todo;
    char path[4096];
    if (!task || !task_data || !results_dir || n_roles < 0 || (n_roles && !roles))
        return mieb_fail(MIEB_ERR_INVALID_ARG, "mieb_score_task needs a task, its task-data folder and a results folder");
    MIEB_TRY(mieb_api_similarity(similarity, &sim));
    struct mieb_emb_memory *mem = calloc((size_t)n_roles + 1, sizeof *mem);
    if (!mem)
        return mieb_fail(MIEB_ERR_OOM, "%d role arrays", n_roles);
    const char *names[1] = {task};
    struct mieb_task_select sel = {.purpose = MIEB_SELECT_RUN, .task_data = task_data, .tasks = names, .n_tasks = 1};
    struct mieb_emb_source src = {.mem = mem, .n_mem = n_roles};
    mieb_status st = memory_roles(roles, n_roles, task, mem);
    if (st == MIEB_OK)
        st = mieb_select_tasks(&e->reg, &sel, &todo);
    if (st == MIEB_OK)
        st = score(e, &todo, task_data, &src, sim, results_dir);
    mieb_selection_free(&todo);
    if (st == MIEB_OK && snprintf(path, sizeof path, "%s/%s.json", results_dir, task) >= (int)sizeof path)
        st = mieb_fail(MIEB_ERR_INVALID_ARG, "%s: path too long", results_dir);
    if (st == MIEB_OK)
        st = mieb_read_file(path, (size_t)1 << 30, json_out, NULL);
    free(mem);
    return st;
}

int mieb_score_task(mieb_engine *e, const char *task, const char *task_data, const struct mieb_role_array *roles,
                    int n_roles, int32_t similarity, const char *results_dir, char **json_out)
{
    *json_out = NULL;
    mieb_status st = mieb_api_call_begin(e);
    if (st == MIEB_OK)
        st = score_task(e, task, task_data, roles, n_roles, similarity, results_dir, json_out);
    return mieb_api_call_end(e, st);
}
