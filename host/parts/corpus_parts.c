/* corpus_parts.c - `run --corpus-parts K --corpus-part I`: one part's partial files (corpus_parts.h). */
#include "corpus_parts.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../core/fileutil.h"
#include "../core/set_aside.h"
#include "fingerprint.h"
#include "partial.h"

/* A signal asked to stop (rc->interrupted, set by run's handler): the part is not written. */
static mieb_status check_stop(const struct mieb_run_ctx *rc)
{
    if (rc->interrupted && *rc->interrupted)
        return mieb_fail(MIEB_ERR_INTERRUPTED, "interrupted by signal %d", (int)*rc->interrupted);
    return MIEB_OK;
}

static void copy_str(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src ? src : "");
}

/* A partial that is not the part its path names is scored again; the file is kept aside
   (as run does with a result that is not one) rather than replaced. */
static mieb_status set_partial_aside(const char *path, const char *why)
{
    char aside[PATH_MAX + 64];
    MIEB_TRY(mieb_set_aside(path, aside, sizeof aside));
    MIEB_LOGW("%s; kept as %s, scoring the part again", why, aside);
    return MIEB_ERR_NOT_FOUND;
}

/*
 * --overwrite-strategy never|only-missing: MIEB_OK when `path` is a complete partial of
 * exactly this (task, split, subset, part), by the rule merge applies (mieb_partial_is);
 * MIEB_ERR_NOT_FOUND when the part is to be scored (absent, or broken and set aside);
 * anything else (out of memory, I/O error) leaves the file alone and fails the task.
 */
static mieb_status have_partial(const char *path, const char *task, const char *split, const char *subset,
                                const struct mieb_part_opts *o)
{
    struct mieb_partial_reader *r = NULL;
    struct mieb_partial_meta m;
    char why[2 * PATH_MAX + 1024];
    if (!mieb_file_exists(path))
        return MIEB_ERR_NOT_FOUND;
    mieb_status st = mieb_partial_open(path, &r, &m);
    if (st != MIEB_OK) {
        if (st != MIEB_ERR_BAD_DATA)
            return st;
        snprintf(why, sizeof why, "%s is not a readable partial (%s)", path, mieb_last_error());
        return set_partial_aside(path, why);
    }
    mieb_partial_close(r);
    struct mieb_partial_want want = {task, split, subset, o->part, o->n_parts, o->meta->name, o->meta->revision};
    if (!mieb_partial_is(path, &m, &want, why, sizeof why))
        return set_partial_aside(path, why);
    return MIEB_OK;
}

static mieb_status part_subset(const struct mieb_run_ctx *rc, const struct mieb_task *task, struct mieb_taskdata *td,
                               const char *split, const char *subset, const struct mieb_part_opts *o, int *written)
{
    char path[PATH_MAX];
    MIEB_TRY(mieb_partial_path(o->dir, task->name, split, subset, o->part, o->n_parts, path, sizeof path));
    mieb_status have = o->skip_existing ? have_partial(path, task->name, split, subset, o) : MIEB_ERR_NOT_FOUND;
    if (have == MIEB_OK)
        MIEB_LOGI("%s /%s/%s: partial exists, skipped (%s)", task->name, split, subset, path);
    if (have != MIEB_ERR_NOT_FOUND)
        return have;
    struct mieb_ret_subset s;
    struct mieb_ret_roles roles = {0};
    struct mieb_partial_writer *w = NULL;
    struct mieb_partial_meta m;
    memset(&m, 0, sizeof m);
    mieb_status st = mieb_ret_subset_load(task, td, split, subset, &s);
    if (st != MIEB_OK)
        return st;
    st = mieb_ret_roles_open(&rc->emb, rc->sim, task->name, split, subset, &s, &roles);
    if (st == MIEB_OK && s.n_kept == 0)
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s: no query has a qrels entry (mteb cannot score this subset)",
                       s.td_path, s.grp);
    if (st == MIEB_OK)
        st = mieb_ret_fingerprint(&s, &roles, m.fingerprint);
    copy_str(m.kind, sizeof m.kind, s.rd.cand_indptr ? MIEB_PARTIAL_CANDIDATES : MIEB_PARTIAL_SEARCH);
    mieb_partial_range(m.kind, s.rd.n_corpus, o->part, o->n_parts, &m.chunk_start, &m.chunk_end, &m.item_start,
                       &m.item_end);
    if (st == MIEB_OK)
        st = mieb_partial_create(path, s.n_kept, &w);
    if (st == MIEB_OK) {
        if (m.item_end > m.item_start) {
            struct mieb_search_opts range = {m.item_start, m.item_end, true, MIEB_MTEB_TOP_K};
            st = mieb_ret_search(rc, task->name, &s, &roles, &range, mieb_partial_append, w);
        } else {
            st = mieb_partial_append_empty(w, s.kept, s.n_kept); /* no chunk for this part */
        }
    }
    /* a stop that arrived after the last block: the part is not written either */
    if (st == MIEB_OK)
        st = check_stop(rc);
    if (st == MIEB_OK) {
        copy_str(m.task, sizeof m.task, task->name);
        copy_str(m.split, sizeof m.split, split);
        copy_str(m.subset, sizeof m.subset, subset);
        copy_str(m.model_name, sizeof m.model_name, o->meta->name);
        copy_str(m.model_revision, sizeof m.model_revision, o->meta->revision);
        copy_str(m.similarity, sizeof m.similarity, mieb_sim_name(rc->sim));
        copy_str(m.precision, sizeof m.precision, o->precision);
        m.part = o->part;
        m.n_parts = o->n_parts;
        m.n_corpus = s.rd.n_corpus;
        m.n_queries = s.rd.n_queries;
        m.top_k = MIEB_MTEB_TOP_K;
        m.chunk_size = MIEB_MTEB_CORPUS_CHUNK;
        st = mieb_partial_commit(w, &m);
        w = NULL;
        *written += st == MIEB_OK;
    }
    if (st == MIEB_OK)
        MIEB_LOGI("%s /%s/%s: part %lld of %lld (chunks %lld..%lld, corpus rows %lld..%lld): %lld entries -> %s",
                  task->name, split, subset, (long long)o->part, (long long)o->n_parts, (long long)m.chunk_start,
                  (long long)m.chunk_end, (long long)m.item_start, (long long)m.item_end, (long long)m.n_entries,
                  path);
    else if (st != MIEB_ERR_INTERRUPTED && !strstr(mieb_last_error(), mieb_taskdata_path(td)))
        mieb_fail_context(st, "%s /%s/%s (%s)", task->name, split, subset, mieb_taskdata_path(td));
    mieb_partial_abort(w);
    mieb_ret_roles_close(&roles);
    mieb_ret_subset_free(&s);
    return st;
}

mieb_status mieb_corpus_part_task(const struct mieb_run_ctx *rc, const struct mieb_task *task,
                                  const struct mieb_part_opts *o, int *written)
{
    char path[PATH_MAX];
    *written = 0;
    struct mieb_taskdata *td = NULL;
    if (task->family != MIEB_FAMILY_RETRIEVAL)
        return mieb_fail(MIEB_ERR_INTERNAL, "task %s is not a retrieval task", task->name);
    if (snprintf(path, sizeof path, "%s/%s.h5", o->task_data, task->name) >= (int)sizeof path)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "path too long");
    MIEB_TRY(mieb_taskdata_open(path, task->name, &td));
    mieb_status st = MIEB_OK;
    for (int sp = 0; sp < task->n_splits && st == MIEB_OK; sp++)
        for (int h = 0; h < task->n_subsets && st == MIEB_OK; h++) {
            const char *split = task->splits[sp], *subset = task->subsets[h];
            if ((st = check_stop(rc)) != MIEB_OK)
                break;
            if (!mieb_taskdata_has_group(td, split, subset))
                st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: group /%s/%s is missing (task %s evaluates split %s, subset %s)",
                               path, split, subset, task->name, split, subset);
            else
                st = part_subset(rc, task, td, split, subset, o, written);
        }
    mieb_taskdata_close(td);
    return st;
}
