/*
 * cmd_inspect.c - `mieb-eval inspect --task-data DIR --embeddings DIR (-t TASK... | -b BENCHMARK)
 * [--json]`: before any scoring, checks for each task what it needs against what is
 * present: the task-data file and its format attributes, every (split, subset) group, and
 * every embedding role the family needs (shape, dtype, shards, multi-vector), with row
 * counts checked against the task data. Exit status 0 when everything is present and
 * consistent, 1 otherwise (2 bad command line, 4 registry unreadable).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_options.h"
#include "cli_start.h"
#include "cli_registry.h"
#include "commands.h"
#include "../config/registry.h"
#include "../core/escape.h"
#include "../core/fileutil.h"
#include "../emb/embeddings.h"
#include "../io/task_data.h"
#include "../plan/task_select.h"

struct inspect_opts {
    const char *task_data, *emb, *bench, *registry;
    const char *tasks[MIEB_PLAN_MAX_TASKS];
    int n_tasks;
    bool json;
};

/* Expected rows of one role: -1 when the task data gives no count; max_label for candidate_labels. */
struct role_need {
    const char *role;
    int64_t expect;     /* items the role must hold (-1: unknown) */
    int64_t min_items;  /* at least this many items (candidate_labels: max label + 1) */
    enum mieb_emb_rows rows; /* MIEB_EMB_SOME_ROWS: a /row_index subset of `expect` rows (classification train) */
};

static const char *dtype_name(enum mieb_emb_dtype d)
{
    return d == MIEB_EMB_F16 ? "float16" : d == MIEB_EMB_BF16 ? "bfloat16" : "float32";
}

/* Count of an int64 label dataset, or of an indptr-encoded multilabel one (n+1 entries). */
static mieb_status label_count(struct mieb_taskdata *td, const char *split, const char *subset, const char *base,
                               int64_t *n, int64_t *max_label)
{
    char name[64];
    int64_t *v = NULL, rows = 0;
    snprintf(name, sizeof name, "%s_labels", base);
    bool multilabel = !mieb_taskdata_has_dataset(td, split, subset, name);
    if (multilabel)
        snprintf(name, sizeof name, "%s_labels_indptr", base);
    MIEB_TRY(mieb_taskdata_read_i64(td, split, subset, name, &v, &rows, NULL));
    *n = multilabel ? rows - 1 : rows;
    if (max_label) {
        *max_label = -1;
        for (int64_t i = 0; i < rows && !multilabel; i++)
            *max_label = v[i] > *max_label ? v[i] : *max_label;
    }
    free(v);
    return MIEB_OK;
}

/* What the task data says each role must hold, for one group. */
static mieb_status group_needs(const struct mieb_task *t, struct mieb_taskdata *td, const char *split,
                               const char *subset, struct role_need *need, int *n_need, cJSON *g)
{
    int64_t a = -1, b = -1, c = -1, maxl = -1;
    *n_need = 0;
    switch (t->family) {
    case MIEB_FAMILY_RETRIEVAL: {
        struct mieb_retrieval_data rd;
        MIEB_TRY(mieb_taskdata_read_retrieval(td, split, subset, &rd));
        cJSON_AddNumberToObject(g, "n_queries", (double)rd.n_queries);
        cJSON_AddNumberToObject(g, "n_corpus", (double)rd.n_corpus);
        cJSON_AddNumberToObject(g, "n_qrels", (double)rd.qrels_indptr[rd.n_queries]);
        cJSON_AddBoolToObject(g, "candidates", rd.cand_indptr != NULL);
        need[(*n_need)++] = (struct role_need){"queries", rd.n_queries, 0, MIEB_EMB_EVERY_ROW};
        need[(*n_need)++] = (struct role_need){"corpus", rd.n_corpus, 0, MIEB_EMB_EVERY_ROW};
        mieb_retrieval_data_free(&rd);
        return MIEB_OK;
    }
    case MIEB_FAMILY_CLASSIFICATION:
        MIEB_TRY(label_count(td, split, subset, "train", &a, NULL));
        MIEB_TRY(label_count(td, split, subset, "eval", &b, NULL));
        cJSON_AddNumberToObject(g, "n_train", (double)a);
        cJSON_AddNumberToObject(g, "n_eval", (double)b);
        need[(*n_need)++] = (struct role_need){"train", a, 0, MIEB_EMB_SOME_ROWS};
        need[(*n_need)++] = (struct role_need){"eval", b, 0, MIEB_EMB_EVERY_ROW};
        return MIEB_OK;
    case MIEB_FAMILY_ZEROSHOT:
        MIEB_TRY(label_count(td, split, subset, "eval", &b, &maxl));
        cJSON_AddNumberToObject(g, "n_eval", (double)b);
        cJSON_AddNumberToObject(g, "max_label", (double)maxl);
        need[(*n_need)++] = (struct role_need){"eval", b, 0, MIEB_EMB_EVERY_ROW};
        need[(*n_need)++] = (struct role_need){"candidate_labels", -1, maxl + 1, MIEB_EMB_EVERY_ROW};
        return MIEB_OK;
    case MIEB_FAMILY_CLUSTERING:
        MIEB_TRY(label_count(td, split, subset, "eval", &b, NULL));
        cJSON_AddNumberToObject(g, "n_eval", (double)b);
        need[(*n_need)++] = (struct role_need){"eval", b, 0, MIEB_EMB_EVERY_ROW};
        return MIEB_OK;
    case MIEB_FAMILY_COMPOSITIONALITY:
        MIEB_TRY(mieb_taskdata_group_attr_i64(td, split, subset, "n_samples", &a));
        MIEB_TRY(mieb_taskdata_group_attr_i64(td, split, subset, "n_images", &b));
        MIEB_TRY(mieb_taskdata_group_attr_i64(td, split, subset, "n_texts", &c));
        cJSON_AddNumberToObject(g, "n_samples", (double)a);
        need[(*n_need)++] = (struct role_need){"images", a * b, 0, MIEB_EMB_EVERY_ROW};
        need[(*n_need)++] = (struct role_need){"texts", a * c, 0, MIEB_EMB_EVERY_ROW};
        return MIEB_OK;
    case MIEB_FAMILY_STS: {
        double *gold = NULL;
        MIEB_TRY(mieb_taskdata_read_f64(td, split, subset, "gold", &gold, &a));
        free(gold);
        cJSON_AddNumberToObject(g, "n_pairs", (double)a);
        need[(*n_need)++] = (struct role_need){"sentence1", a, 0, MIEB_EMB_EVERY_ROW};
        need[(*n_need)++] = (struct role_need){"sentence2", a, 0, MIEB_EMB_EVERY_ROW};
        return MIEB_OK;
    }
    default:
        return mieb_fail(MIEB_ERR_UNSUPPORTED, "task %s: unknown task type '%s'", t->name, t->type);
    }
}

/* Open one role, describe it in r, check it against need. Returns false on a problem. */
static bool check_role(const struct inspect_opts *o, const struct mieb_task *t, const char *split,
                       const char *subset, const struct role_need *need, int64_t *dim, cJSON *r)
{
    struct mieb_emb_role *role = NULL;
    char msg[1024] = "";
    cJSON_AddStringToObject(r, "role", need->role);
    mieb_status st = mieb_emb_role_open(o->emb, t->name, split, subset, need->role, need->rows, &role);
    if (st != MIEB_OK) {
        cJSON_AddStringToObject(r, "error", mieb_last_error());
        return false;
    }
    const struct mieb_emb_info *in = mieb_emb_role_info(role);
    cJSON_AddStringToObject(r, "path", mieb_emb_role_path(role));
    cJSON_AddNumberToObject(r, "n_items", (double)in->n_items);
    cJSON_AddNumberToObject(r, "n_rows", (double)in->n_rows);
    cJSON_AddNumberToObject(r, "dim", (double)in->dim);
    cJSON_AddStringToObject(r, "dtype", dtype_name(in->dtype));
    cJSON_AddBoolToObject(r, "multivector", in->multivector);
    cJSON_AddNumberToObject(r, "n_shards", in->n_shards);
    cJSON_AddBoolToObject(r, "row_index", in->has_row_index);
    cJSON_AddBoolToObject(r, "reordered", in->reordered);
    if (need->rows == MIEB_EMB_SOME_ROWS && in->has_row_index && need->expect >= 0) {
        int64_t *idx = NULL;
        if (mieb_emb_role_row_index(role, &idx) != MIEB_OK)
            snprintf(msg, sizeof msg, "%s", mieb_last_error());
        for (int64_t i = 0; idx && !msg[0] && i < in->n_items; i++)
            if (idx[i] < 0 || idx[i] >= need->expect)
                snprintf(msg, sizeof msg, "%s: /row_index[%lld] = %lld is outside the %lld rows of the task data",
                         mieb_emb_role_path(role), (long long)i, (long long)idx[i], (long long)need->expect);
        free(idx);
    } else if (need->expect >= 0 && in->n_items != need->expect) {
        snprintf(msg, sizeof msg, "%s: %lld items, the task data has %lld", mieb_emb_role_path(role),
                 (long long)in->n_items, (long long)need->expect);
    }
    if (!msg[0] && in->n_items < need->min_items)
        snprintf(msg, sizeof msg, "%s: %lld items, but the task data's labels reach index %lld",
                 mieb_emb_role_path(role), (long long)in->n_items, (long long)need->min_items - 1);
    if (!msg[0] && *dim > 0 && in->dim != *dim)
        snprintf(msg, sizeof msg, "%s: dim %lld differs from the other roles' %lld", mieb_emb_role_path(role),
                 (long long)in->dim, (long long)*dim);
    if (*dim <= 0)
        *dim = in->dim;
    mieb_emb_role_close(role);
    if (msg[0])
        cJSON_AddStringToObject(r, "error", msg);
    return !msg[0];
}

/* Inspect one task; fills tj and returns true when everything needed is present and consistent. */
static bool inspect_task(const struct inspect_opts *o, const struct mieb_task *t, cJSON *tj)
{
    char path[4096], fname[1024];
    bool ok = true;
    cJSON_AddStringToObject(tj, "task", t->name);
    cJSON_AddStringToObject(tj, "type", t->type);
    if (t->is_aggregate) {
        cJSON_AddStringToObject(tj, "aggregate_of", t->aggregate_of);
        cJSON_AddBoolToObject(tj, "ok", true);
        return true;
    }
    snprintf(fname, sizeof fname, "%s.h5", t->name);
    struct mieb_taskdata *td = NULL;
    mieb_status st = mieb_path_join(path, sizeof path, o->task_data, fname);
    if (st == MIEB_OK)
        cJSON_AddStringToObject(tj, "task_data", path);
    if (st == MIEB_OK && !mieb_file_exists(path))
        st = mieb_fail(MIEB_ERR_NOT_FOUND, "%s: task-data file is missing", path);
    if (st == MIEB_OK)
        st = mieb_taskdata_open(path, t->name, &td);
    if (st != MIEB_OK) {
        cJSON_AddStringToObject(tj, "error", mieb_last_error());
        cJSON_AddBoolToObject(tj, "ok", false);
        return false;
    }
    cJSON_AddStringToObject(tj, "dataset_revision", mieb_taskdata_revision(td));
    cJSON *groups = cJSON_AddArrayToObject(tj, "groups");
    for (int s = 0; s < t->n_splits; s++)
        for (int k = 0; k < t->n_subsets; k++) {
            cJSON *g = cJSON_CreateObject(), *roles = cJSON_CreateArray();
            struct role_need need[4];
            int n_need = 0;
            int64_t dim = 0;
            cJSON_AddItemToArray(groups, g);
            cJSON_AddStringToObject(g, "split", t->splits[s]);
            cJSON_AddStringToObject(g, "subset", t->subsets[k]);
            if (!mieb_taskdata_has_group(td, t->splits[s], t->subsets[k]))
                st = mieb_fail(MIEB_ERR_NOT_FOUND, "%s: group /%s/%s is missing", path, t->splits[s], t->subsets[k]);
            else
                st = group_needs(t, td, t->splits[s], t->subsets[k], need, &n_need, g);
            if (st != MIEB_OK) {
                cJSON_AddStringToObject(g, "error", mieb_last_error());
                ok = false;
                cJSON_Delete(roles);
                continue;
            }
            cJSON_AddItemToObject(g, "roles", roles);
            for (int i = 0; i < n_need; i++) {
                cJSON *r = cJSON_CreateObject();
                cJSON_AddItemToArray(roles, r);
                ok &= check_role(o, t, t->splits[s], t->subsets[k], &need[i], &dim, r);
            }
        }
    mieb_taskdata_close(td);
    cJSON_AddBoolToObject(tj, "ok", ok);
    return ok;
}

static const char *str_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double num_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* The human-readable report of one task. */
static void print_task(const cJSON *tj)
{
    const cJSON *g, *r;
    mieb_printf_esc("%s [%s]: %s\n", str_of(tj, "task"), str_of(tj, "type"),
           cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tj, "ok")) ? "OK" : "PROBLEM");
    if (str_of(tj, "aggregate_of"))
        mieb_printf_esc("  aggregate of %s: needs no files of its own\n", str_of(tj, "aggregate_of"));
    if (str_of(tj, "task_data"))
        mieb_printf_esc("  task data: %s%s%s\n", str_of(tj, "task_data"), str_of(tj, "dataset_revision") ? " revision " : "",
               str_of(tj, "dataset_revision") ? str_of(tj, "dataset_revision") : "");
    if (str_of(tj, "error"))
        mieb_printf_esc("  ERROR %s\n", str_of(tj, "error"));
    cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(tj, "groups"))
    {
        mieb_printf_esc("  %s/%s:", str_of(g, "split"), str_of(g, "subset"));
        const char *counts[] = {"n_queries", "n_corpus", "n_qrels", "n_train", "n_eval", "n_samples", "n_pairs"};
        for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
            if (num_of(g, counts[i]) >= 0)
                mieb_printf_esc(" %s=%.0f", counts[i], num_of(g, counts[i]));
        mieb_printf_esc("\n");
        if (str_of(g, "error"))
            mieb_printf_esc("    ERROR %s\n", str_of(g, "error"));
        cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(g, "roles"))
        {
            if (num_of(r, "n_items") >= 0)
                mieb_printf_esc("    %-16s %.0f items [%.0f x %.0f] %s%s, %.0f file(s)%s%s\n", str_of(r, "role"),
                       num_of(r, "n_items"), num_of(r, "n_rows"), num_of(r, "dim"), str_of(r, "dtype"),
                       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "multivector")) ? " multi-vector" : "",
                       num_of(r, "n_shards"),
                       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "row_index")) ? ", row_index" : "",
                       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "reordered"))
                           ? " (rows stored in another order; read in the split's)"
                           : "");
            else
                mieb_printf_esc("    %-16s missing\n", str_of(r, "role"));
            if (str_of(r, "error"))
                mieb_printf_esc("      ERROR %s\n", str_of(r, "error"));
        }
    }
}

#define IO(f) offsetof(struct inspect_opts, f)
static const struct mieb_cli_opt inspect_table[] = { /* described in the head */
    {"--task-data", .kind = MIEB_OPT_IN_DIR, .at = IO(task_data)},
    {"--embeddings", .kind = MIEB_OPT_IN_DIR, .at = IO(emb)},
    {"--tasks", "-t", .kind = MIEB_OPT_LIST, .at = IO(tasks), .count_at = IO(n_tasks), .cap = MIEB_PLAN_MAX_TASKS,
     .flags = MIEB_OPT_OF_TASKS},
    {"--benchmark", "-b", .kind = MIEB_OPT_STRING, .at = IO(bench)},
    {"--registry", .kind = MIEB_OPT_PATH, .at = IO(registry)},
    {"--json", .kind = MIEB_OPT_FLAG, .at = IO(json)},
    {0}};
#undef IO

const struct mieb_cli_spec mieb_inspect_spec = {
    .name = "inspect",
    .opts = inspect_table,
    .size = sizeof(struct inspect_opts),
    .head = "usage: mieb-eval inspect --task-data DIR --embeddings DIR (-t TASK [TASK ...] | -b BENCHMARK)\n"
            "                         [--json] [--registry FILE]\n"
            "\n"
            "Checks, without scoring, that every input a run needs is present and consistent: the\n"
            "task-data file (format attributes, one group per split and subset) and each embedding\n"
            "role of the task's family (retrieval: queries, corpus; ImageClassification: train, eval;\n"
            "ZeroShotClassification: eval, candidate_labels; ImageClustering: eval; Compositionality:\n"
            "images, texts; VisualSTS: sentence1, sentence2; aggregate tasks need none), with their\n"
            "shapes, dtypes and shards, and row counts checked against the task data.\n"
            "Exit status: 0 all present and consistent; 1 something missing or inconsistent;\n"
            "2 bad command line; 4 registry unreadable.\n",
    .unknown = "argument",
    .missing = MIEB_CLI_BAD,
    .bad_value = MIEB_CLI_BAD_SAID,
};

static enum mieb_cli_parsed parse_args(int argc, char **argv, struct inspect_opts *o)
{
    enum mieb_cli_parsed r = mieb_cli_parse(&mieb_inspect_spec, argc, argv, o);
    if (r == MIEB_CLI_GO && (!o->task_data || !o->emb || (!o->n_tasks && !o->bench))) {
        mieb_fprintf_esc(stderr, "mieb-eval inspect: --task-data, --embeddings and -t or -b are required\n");
        return MIEB_CLI_BAD;
    }
    return r;
}

int mieb_cmd_inspect(int argc, char **argv)
{
    struct inspect_opts o;
    int rc;
    if (!mieb_cli_start(&mieb_inspect_spec, parse_args(argc, argv, &o), NULL, &rc))
        return rc;
    struct mieb_registry reg;
    if (!mieb_cli_registry("inspect", o.registry, NULL, &reg))
        return MIEB_EXIT_FATAL;
    struct mieb_task_list list;
    struct mieb_task_select sel = {.purpose = MIEB_SELECT_INSPECT, .task_data = o.task_data, .tasks = o.tasks,
                                   .n_tasks = o.n_tasks, .benchmarks = &o.bench, .n_benchmarks = o.bench != NULL};
    if (mieb_select_tasks(&reg, &sel, &list) != MIEB_OK) {
        mieb_fprintf_esc(stderr, "mieb-eval inspect: %s\n", mieb_last_error());
        rc = MIEB_EXIT_USAGE;
    }
    if (rc == MIEB_EXIT_OK) {
        cJSON *all = cJSON_CreateArray();
        int n_bad = 0;
        for (int i = 0; i < list.n; i++) {
            cJSON *tj = cJSON_CreateObject();
            cJSON_AddItemToArray(all, tj);
            n_bad += !inspect_task(&o, list.v[i], tj);
            if (!o.json)
                print_task(tj);
        }
        if (o.json) {
            char *text = cJSON_Print(all);
            if (text)
                puts(text); /* JSON: cJSON escaped its strings */
            free(text);
        } else {
            mieb_printf_esc("%d task(s) inspected, %d with problems\n", list.n, n_bad);
        }
        cJSON_Delete(all);
        rc = n_bad ? MIEB_EXIT_TASK_FAILED : MIEB_EXIT_OK;
    }
    mieb_selection_free(&list);
    mieb_registry_free(&reg);
    return rc;
}
