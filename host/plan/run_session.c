/* run_session.c - one run, opened, scored and finished for its client (see run_session.h). */
#include "run_session.h"

#include <stdlib.h>
#include <string.h>

#include "../core/mem_default.h"
#include "../dispatch/dispatch.h"
#include "../results/results_writer.h"

mieb_status mieb_run_options_check(const struct mieb_run_options *o)
{
    const struct mieb_task_select *sel = &o->select;
    if (!o->task_data || !o->embeddings || !o->output_folder)
        return mieb_fail(MIEB_ERR_INVALID_ARG,
                         "--task-data and --embeddings (or --export) and --output-folder are required");
    if (!sel->n_tasks && !sel->n_benchmarks && !sel->n_task_types)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "name tasks with -t, a benchmark with -b, or task types with --task-types");
    if (o->shard_index_set && !sel->num_shards)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "--shard-index needs --num-shards");
    if (sel->num_shards && !o->shard_index_set)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "--num-shards needs --shard-index");
    if (sel->num_shards && sel->shard_index >= sel->num_shards)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "--shard-index %ld out of range: 0 <= I < --num-shards (%ld)",
                         sel->shard_index, sel->num_shards);
    if ((o->corpus_parts || o->corpus_part_set || o->partials_dir) &&
        (!o->corpus_parts || !o->corpus_part_set || !o->partials_dir))
        return mieb_fail(MIEB_ERR_INVALID_ARG, "--corpus-parts, --corpus-part and --partials-dir go together");
    if (o->corpus_parts && o->corpus_part >= o->corpus_parts)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "--corpus-part %ld out of range: 0 <= I < --corpus-parts (%ld)",
                         o->corpus_part, o->corpus_parts);
    return MIEB_OK;
}

/* The step's failure: where it stopped is the client's to word. */
static mieb_status at(struct mieb_run_session *s, enum mieb_run_step step, mieb_status st)
{
    if (st != MIEB_OK)
        s->step = step;
    return st;
}

static mieb_status select_tasks(struct mieb_run_session *s, const struct mieb_registry *reg)
{
    struct mieb_task_select sel = s->o->select;
    sel.purpose = MIEB_SELECT_RUN;
    sel.task_data = s->o->task_data;
    if (!(s->todo = calloc(1, sizeof *s->todo))) /* MIEB_PLAN_MAX_TASKS pointers: not on the stack */
        return mieb_fail(MIEB_ERR_OOM, "the task list");
    return mieb_select_tasks(reg, &sel, s->todo);
}

/* model_meta.json, checked against the model asked for, with the similarity asked for. */
static mieb_status check_model(struct mieb_run_session *s)
{
    const struct mieb_run_options *o = s->o;
    struct mieb_model_meta *m = &s->meta;
    MIEB_TRY(mieb_model_meta_load(o->embeddings, m));
    if ((o->model && strcmp(o->model, m->name)) || (o->model_revision && strcmp(o->model_revision, m->revision)))
        return mieb_fail(MIEB_ERR_INVALID_ARG, "%s: the embeddings are of model %s revision %s, not %s %s", m->path,
                         m->name, m->revision, o->model ? o->model : m->name,
                         o->model_revision ? o->model_revision : m->revision);
    if (o->similarity && (!o->similarity[0] || mieb_sim_parse(o->similarity, &m->sim) != MIEB_OK))
        return mieb_fail(MIEB_ERR_INVALID_ARG, "similarity '%s' is not cosine, dot or MaxSim", o->similarity);
    return MIEB_OK;
}

static enum mieb_precision precision_of(const char *p)
{
    return p && !strcmp(p, "tf32") ? MIEB_PREC_TF32 : p && !strcmp(p, "bf16") ? MIEB_PREC_BF16 : MIEB_PREC_FP32;
}

/* The backend: the client's where it computes in the precision asked for, else one of the
   session's own on o->device in that precision. */
static mieb_status open_backend(struct mieb_run_session *s, struct mieb_backend *be)
{
    const struct mieb_run_options *o = s->o;
    if (be && be->opts.precision == precision_of(o->precision)) {
        s->be = be;
    } else {
        struct mieb_backend_opts bo = {.mem_limit = o->mem_limit ? o->mem_limit : mieb_mem_default_here(NULL, 0),
                                       .n_threads = o->threads, .precision = precision_of(o->precision)};
        MIEB_TRY(at(s, MIEB_RUN_AT_DEVICE, mieb_backend_init(o->device ? o->device : "auto", &bo, &s->be)));
        s->own_be = 1;
    }
    if (precision_of(o->precision) != MIEB_PREC_FP32 && !strcmp(s->be->iface.name, "cpu"))
        return at(s, MIEB_RUN_AT_PRECISION,
                  mieb_fail(MIEB_ERR_INVALID_ARG, "--precision %s needs the CUDA backend; the CPU backend computes in fp32",
                            o->precision));
    return MIEB_OK;
}

mieb_status mieb_run_session_open(struct mieb_run_session *s, const struct mieb_run_options *o,
                                  const struct mieb_run_process *p, const struct mieb_registry *reg,
                                  struct mieb_backend *be)
{
    *s = (struct mieb_run_session){.o = o, .p = p, .reg = reg};
    MIEB_TRY(at(s, MIEB_RUN_AT_SELECT, mieb_run_options_check(o)));
    MIEB_TRY(at(s, MIEB_RUN_AT_SELECT, select_tasks(s, reg)));
    mieb_status st = at(s, MIEB_RUN_AT_MODEL, check_model(s));
    if (st == MIEB_OK)
        st = open_backend(s, be);
    if (st == MIEB_OK)
        st = at(s, MIEB_RUN_AT_OUTPUT, mieb_results_dir(o->output_folder, s->meta.name, s->meta.revision,
                                                        s->results_dir, sizeof s->results_dir));
    if (st == MIEB_OK)
        st = at(s, MIEB_RUN_AT_OUTPUT, mieb_results_write_model_meta(s->results_dir, s->meta.text, s->meta.text_len));
    if (s->meta.text)
        mieb_model_meta_free(&s->meta); /* copied: only the parsed fields are used from here */
    if (st == MIEB_OK)
        s->step = MIEB_RUN_OPEN;
    return st;
}

mieb_status mieb_run_session_score(struct mieb_run_session *s)
{
    const struct mieb_run_options *o = s->o;
    const char *precision = o->precision ? o->precision : "fp32";
    mieb_run_plan_outputs(s->results_dir, o->per_query_dir, o->partials_dir, s->p->watch_tmp);
    struct mieb_run_ctx rc = {.emb = {.dir = o->embeddings}, .be = s->be, .sim = s->meta.sim,
                              .mem_limit = s->be->opts.mem_limit,
                              .kmeans_full = o->kmeans_full, .probe_cpu = o->probe_cpu, .n_threads = o->threads,
                              .per_query_dir = o->per_query_dir, .interrupted = s->p->interrupted};
    MIEB_LOGI("scoring %d task(s) for %s on %s (similarity %s)", s->todo->n, s->meta.name, s->be->iface.name,
              mieb_sim_name(s->meta.sim));
    if (mieb_manifest_begin(&s->man, s->p->argc, s->p->argv, s->be, precision, s->meta.name, s->meta.revision) !=
        MIEB_OK)
        MIEB_LOGW("no run manifest: %s", mieb_last_error());
    /* corpus parts: retrieval tasks write this part's partials, host/parts/corpus_parts.h */
    struct mieb_part_opts part = {.dir = o->partials_dir, .part = o->corpus_part, .n_parts = o->corpus_parts,
                                  .task_data = o->task_data,
                                  .skip_existing = !o->overwrite || strcmp(o->overwrite, "always") != 0,
                                  .meta = &s->meta, .precision = precision};
    struct mieb_run_plan plan = {.reg = s->reg, .rc = &rc, .task_data = o->task_data, .results_dir = s->results_dir,
                                 .overwrite = o->overwrite ? o->overwrite : "only-missing",
                                 .overwrite_given = o->overwrite != NULL, .precision = precision,
                                 .part = o->corpus_parts ? &part : NULL, .man = &s->man, .hooks = s->p->hooks,
                                 .hooks_user = s->p->hooks_user};
    mieb_run_plan_score(&plan, s->todo, &s->outcomes, &s->failed, &s->fatal);
    if (*s->p->interrupted)
        return mieb_fail(MIEB_ERR_INTERRUPTED, "interrupted; finished results are kept, run again to resume");
    if (s->fatal) {
        mieb_status dev = mieb_outcomes_device_failure(&s->outcomes);
        return mieb_fail(dev != MIEB_OK ? dev : MIEB_ERR_INTERNAL, "the device failed; finished results are kept");
    }
    return MIEB_OK;
}

cJSON *mieb_run_session_summary(const struct mieb_run_session *s)
{
    return mieb_outcomes_json(&s->outcomes, s->results_dir);
}

mieb_status mieb_run_session_finish(struct mieb_run_session *s, char *path, size_t path_n)
{
    cJSON *sum = mieb_run_session_summary(s);
    if (!sum)
        return mieb_fail(MIEB_ERR_OOM, "the run's summary");
    return mieb_manifest_finish(&s->man, sum, s->results_dir, path, path_n);
}

void mieb_run_session_free(struct mieb_run_session *s)
{
    if (s->own_be)
        mieb_backend_free(s->be);
    if (s->meta.text)
        mieb_model_meta_free(&s->meta);
    mieb_manifest_free(&s->man);
    mieb_outcomes_free(&s->outcomes);
    if (s->todo)
        mieb_selection_free(s->todo);
    free(s->todo);
    *s = (struct mieb_run_session){0};
}
