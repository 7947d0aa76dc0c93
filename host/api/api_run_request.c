/* api_run_request.c - mieb_run_request_new / _set / _free (include/mieb.h): the session's
   options by the names of `mieb-eval run`'s long options. A new option is one row of the
   table below and its field in struct mieb_run_options. */
#include "api_run_request.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/mieb.h"

enum kind {
    TEXT,     /* a non-empty string: const char * */
    WORDS,    /* one more word of a list: const char *const * with its int count at count_at */
    NUMBER,   /* a whole number in [lo, hi]: long */
    CHOICE,   /* one of choices: the choice itself, const char * */
    INDEX,    /* one of choices: its index, int */
};

static const char *const similarities[] = {"cosine", "dot", "MaxSim", NULL};
static const char *const precisions[] = {"fp32", "tf32", "bf16", NULL};
static const char *const ways[] = {"always", "never", "only-missing", NULL};
static const char *const kmeans_modes[] = {"minibatch", "full", NULL}; /* kmeans_full: the index */
static const char *const probe_devices[] = {"auto", "cpu", NULL};      /* probe_cpu: the index */

struct option {
    const char *name;
    enum kind kind;
    size_t at, count_at; /* count_at: WORDS' count; NUMBER: the bool set once given, or 0 */
    long lo, hi;
    const char *const *choices;
};

#define AT(f) offsetof(struct mieb_run_options, f)
static const struct option table[] = {
    {"task-data", .kind = TEXT, .at = AT(task_data)},
    {"embeddings", .kind = TEXT, .at = AT(embeddings)},
    {"output-folder", .kind = TEXT, .at = AT(output_folder)},
    {"tasks", .kind = WORDS, .at = AT(select.tasks), .count_at = AT(select.n_tasks)},
    {"benchmark", .kind = WORDS, .at = AT(select.benchmarks), .count_at = AT(select.n_benchmarks)},
    {"task-types", .kind = WORDS, .at = AT(select.task_types), .count_at = AT(select.n_task_types)},
    {"eval-splits", .kind = WORDS, .at = AT(select.eval_splits), .count_at = AT(select.n_eval_splits)},
    {"languages", .kind = WORDS, .at = AT(select.languages), .count_at = AT(select.n_languages)},
    {"shard-index", .kind = NUMBER, .at = AT(select.shard_index), .count_at = AT(shard_index_set), .lo = 0, .hi = INT_MAX},
    {"num-shards", .kind = NUMBER, .at = AT(select.num_shards), .lo = 1, .hi = INT_MAX},
    {"model", .kind = TEXT, .at = AT(model)},
    {"model-revision", .kind = TEXT, .at = AT(model_revision)},
    {"similarity", .kind = CHOICE, .at = AT(similarity), .choices = similarities},
    {"overwrite-strategy", .kind = CHOICE, .at = AT(overwrite), .choices = ways},
    {"precision", .kind = CHOICE, .at = AT(precision), .choices = precisions},
    {"per-query", .kind = TEXT, .at = AT(per_query_dir)},
    {"kmeans", .kind = INDEX, .at = AT(kmeans_full), .choices = kmeans_modes},
    {"probe-device", .kind = INDEX, .at = AT(probe_cpu), .choices = probe_devices},
    {"corpus-parts", .kind = NUMBER, .at = AT(corpus_parts), .lo = 1, .hi = 99999},
    {"corpus-part", .kind = NUMBER, .at = AT(corpus_part), .count_at = AT(corpus_part_set), .lo = 0, .hi = 99999},
    {"partials-dir", .kind = TEXT, .at = AT(partials_dir)},
};
#undef AT

/* Keep p for the request's free; NULL stays NULL (the caller's out of memory). */
static void *own(struct mieb_run_request *rq, void *p)
{
    if (!p)
        return NULL;
    if (rq->n_owned == rq->cap_owned) {
        int cap = rq->cap_owned ? 2 * rq->cap_owned : 32;
        char **v = realloc(rq->owned, (size_t)cap * sizeof *v);
        if (!v) {
            free(p);
            return NULL;
        }
        rq->owned = v;
        rq->cap_owned = cap;
    }
    rq->owned[rq->n_owned++] = p;
    return p;
}

/* One more word of a list: a new array of the words so far and this one (the old one stays
   owned: lists are a few words). */
static mieb_status add_word(struct mieb_run_request *rq, const struct option *op, const char *word)
{
    const char *const **list = (const char *const **)((char *)&rq->o + op->at);
    int *n = (int *)((char *)&rq->o + op->count_at);
    const char **grown = own(rq, malloc(((size_t)*n + 1) * sizeof *grown));
    char *copy = own(rq, strdup(word));
    if (!grown || !copy)
        return mieb_fail(MIEB_ERR_OOM, "run option %s", op->name);
    for (int i = 0; i < *n; i++)
        grown[i] = (*list)[i];
    grown[(*n)++] = copy;
    *list = grown;
    return MIEB_OK;
}

static mieb_status set_number(struct mieb_run_request *rq, const struct option *op, const char *value)
{
    char *end;
    long long v = strtoll(value, &end, 10);
    if (end == value || *end || v < op->lo || v > op->hi)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "run option %s '%s': a whole number from %ld to %ld", op->name, value,
                         op->lo, op->hi);
    *(long *)((char *)&rq->o + op->at) = (long)v;
    if (op->count_at)
        *(bool *)((char *)&rq->o + op->count_at) = true;
    return MIEB_OK;
}

static mieb_status set_choice(struct mieb_run_request *rq, const struct option *op, const char *value)
{
    for (int i = 0; op->choices[i]; i++)
        if (!strcmp(op->choices[i], value)) {
            if (op->kind == INDEX)
                *(int *)((char *)&rq->o + op->at) = i;
            else
                *(const char **)((char *)&rq->o + op->at) = op->choices[i];
            return MIEB_OK;
        }
    char list[128] = "";
    for (int i = 0; op->choices[i]; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", op->choices[i]);
    return mieb_fail(MIEB_ERR_INVALID_ARG, "run option %s '%s': one of %s", op->name, value, list);
}

static mieb_status set(struct mieb_run_request *rq, const char *name, const char *value)
{
    if (!rq || !name || !value)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "mieb_run_request_set needs a request, an option and a value");
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
        const struct option *op = &table[i];
        if (strcmp(op->name, name))
            continue;
        if (!*value)
            return mieb_fail(MIEB_ERR_INVALID_ARG, "run option %s: an empty value", name);
        switch (op->kind) {
        case TEXT: {
            char *copy = own(rq, strdup(value));
            if (!copy)
                return mieb_fail(MIEB_ERR_OOM, "run option %s", name);
            *(const char **)((char *)&rq->o + op->at) = copy;
            return MIEB_OK;
        }
        case WORDS: return add_word(rq, op, value);
        case NUMBER: return set_number(rq, op, value);
        case CHOICE:
        case INDEX: return set_choice(rq, op, value);
        }
    }
    return mieb_fail(MIEB_ERR_INVALID_ARG, "no run option '%s' in this library (mieb-eval %s)", name, MIEB_VERSION);
}

int mieb_run_request_new(mieb_run_request **out)
{
    mieb_clear_error();
    if (!out)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "mieb_run_request_new needs somewhere to put the request");
    *out = calloc(1, sizeof **out);
    return *out ? MIEB_OK : mieb_fail(MIEB_ERR_OOM, "run request");
}

int mieb_run_request_set(mieb_run_request *rq, const char *option, const char *value)
{
    mieb_clear_error();
    return set(rq, option, value);
}

void mieb_run_request_free(mieb_run_request *rq)
{
    if (!rq)
        return;
    for (int i = 0; i < rq->n_owned; i++)
        free(rq->owned[i]);
    free(rq->owned);
    free(rq);
}
