/**
 * merge.c - `merge`: the K corpus parts of each (split, subset) of a retrieval task -> the
 * task's mteb results file (corpus_parts.h).
 *
 * Checked before anything is written: every part file present under its canonical name,
 * each one naming this task/split/subset/part/K and the model of --embeddings, all parts
 * agreeing on kind, counts, similarity, precision and input fingerprint, their chunk ranges
 * the deterministic split, and the fingerprint equal to that of the inputs given to merge.
 * Every problem found is listed (one per line) in the error. Then the accepted offers are
 * replayed, part after part (= chunk order), through mteb's heap emulation, and the heaps go
 * through the retrieval driver's metric path.
 */
#include "corpus_parts.h"

#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/escape.h"
#include "../families/mteb_heap.h"
#include "../results/results_writer.h"
#include "fingerprint.h"
#include "partial.h"

#define MERGE_TILE 1024 /* queries replayed at once: 1024 heaps of 1000 entries, ~12 MB */

/* ---- the list of problems reported together ---- */
struct problems {
    char *buf;
    size_t len, cap;
    int n, n_missing;
};

static void problem(struct problems *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(struct problems *p, const char *fmt, ...)
{
    char line[8192];
    va_list ap;
    va_start(ap, fmt);
    mieb_vsnprintf_esc(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t l = strlen(line);
    if (p->len + l + 4 > p->cap) {
        size_t cap = (p->cap + l + 4) * 2;
        char *nb = realloc(p->buf, cap);
        if (!nb)
            return; /* the count still says something is wrong */
        p->buf = nb;
        p->cap = cap;
    }
    /* one line, as every message is (core/escape.h would show a newline as \x0a) */
    p->len += (size_t)snprintf(p->buf + p->len, p->cap - p->len, "%s%s", p->n ? "; " : " ", line);
    p->n++;
}

/* ---- phase 1: the part files of one (split, subset) ---- */

struct subset_plan {
    int64_t n_parts;
    struct mieb_partial_meta ref; /* part 0's attributes */
};

/* Which part files are there: n_parts found (0 when none, -1 when K disagrees), present[i]. */
static int64_t scan_dir(const char *dir, struct problems *pr, bool **present)
{
    DIR *d = opendir(dir);
    int64_t k_seen = 0;
    char first[256] = "";
    *present = NULL;
    if (!d)
        return 0;
    struct dirent *e;
    /* first pass: the part count; every file must agree on it */
    while ((e = readdir(d))) {
        int64_t i, k;
        if (!mieb_partial_parse_name(e->d_name, &i, &k))
            continue;
        if (k_seen == 0) {
            k_seen = k;
            snprintf(first, sizeof first, "%s", e->d_name);
        } else if (k != k_seen && k_seen > 0) {
            problem(pr, "%s holds parts of different splits: %s (%lld parts) and %s (%lld parts); remove the "
                        "stale files", dir, first, (long long)k_seen, e->d_name, (long long)k);
            k_seen = -1;
        }
    }
    if (k_seen > 0) {
        *present = calloc((size_t)k_seen, sizeof(bool));
        rewinddir(d);
        while (*present && (e = readdir(d))) {
            int64_t i, k;
            if (mieb_partial_parse_name(e->d_name, &i, &k) && k == k_seen)
                (*present)[i] = true;
        }
        if (!*present) {
            problem(pr, "%s: out of memory", dir);
            k_seen = -1;
        }
    }
    closedir(d);
    return k_seen;
}

#define DIFF_STR(field, what, why)                                                                            \
    if (strcmp(m.field, ref->field))                                                                          \
    problem(pr, "%s: %s '%s' differs from %s's '%s'%s", path, what, m.field, ref_path, ref->field, why)
#define DIFF_INT(field, what)                                                                                 \
    if (m.field != ref->field)                                                                                \
    problem(pr, "%s: %s %lld differs from %s's %lld", path, what, (long long)m.field, ref_path,               \
            (long long)ref->field)

/* Check the parts of one (split, subset); fill plan; report into pr. */
static void check_subset(const struct mieb_task *task, const char *split, const char *subset,
                         const struct mieb_merge_opts *o, struct problems *pr, struct subset_plan *plan)
{
    char dir[PATH_MAX], path[PATH_MAX], ref_path[PATH_MAX] = "";
    bool *present = NULL;
    int before = pr->n;
    const struct mieb_partial_meta *ref = &plan->ref;
    int64_t *ref_rows = NULL;
    memset(plan, 0, sizeof *plan);
    if (mieb_partial_dir(o->dir, task->name, split, subset, dir, sizeof dir) != MIEB_OK) {
        problem(pr, "%s", mieb_last_error());
        return;
    }
    int64_t k = scan_dir(dir, pr, &present);
    if (k == 0) {
        problem(pr, "%s /%s/%s: no partial files (part-IIIII-of-KKKKK.h5) in %s: run `mieb-eval run ... "
                    "--corpus-parts K --corpus-part I --partials-dir %s` for every part I first",
                task->name, split, subset, dir, o->dir);
        pr->n_missing++;
        return;
    }
    if (k < 0)
        return;
    plan->n_parts = k;
    for (int64_t i = 0; i < k; i++) {
        mieb_partial_path(o->dir, task->name, split, subset, i, k, path, sizeof path);
        if (!present[i]) {
            problem(pr, "missing part file %s", path);
            pr->n_missing++;
            continue;
        }
        struct mieb_partial_reader *r = NULL;
        struct mieb_partial_meta m;
        if (mieb_partial_open(path, &r, &m) != MIEB_OK) {
            problem(pr, "%s", mieb_last_error());
            continue;
        }
        /* the rule run's only-missing keeps a part by (partial.h) */
        struct mieb_partial_want want = {task->name, split, subset, i, k, o->meta->name, o->meta->revision};
        char why[2048];
        if (!mieb_partial_is(path, &m, &want, why, sizeof why))
            problem(pr, "%s", why);
        if (!ref_path[0]) {
            plan->ref = m;
            snprintf(ref_path, sizeof ref_path, "%s", path);
            ref_rows = malloc(sizeof(int64_t) * (size_t)(m.n_kept + 1));
            if (ref_rows)
                memcpy(ref_rows, mieb_partial_query_rows(r), sizeof(int64_t) * (size_t)m.n_kept);
        } else {
            DIFF_STR(kind, "kind", "");
            DIFF_STR(similarity, "similarity", "");
            DIFF_STR(precision, "precision", "");
            DIFF_STR(fingerprint, "input fingerprint", " (the parts were computed from different inputs)");
            DIFF_INT(n_corpus, "corpus size");
            DIFF_INT(n_queries, "query count");
            DIFF_INT(n_kept, "kept query count");
            if (m.n_kept == ref->n_kept && ref_rows &&
                memcmp(ref_rows, mieb_partial_query_rows(r), sizeof(int64_t) * (size_t)m.n_kept))
                problem(pr, "%s: /query_rows differ from %s's", path, ref_path);
        }
        mieb_partial_close(r);
    }
    free(present);
    free(ref_rows);
    if (pr->n != before)
        plan->n_parts = 0;
}

/* The inputs given to merge must be those the parts were computed from. */
static mieb_status check_inputs(const struct mieb_task *task, struct mieb_taskdata *td, const char *split,
                                const char *subset, const struct mieb_merge_opts *o, const struct subset_plan *plan,
                                struct problems *pr)
{
    struct mieb_ret_subset s;
    struct mieb_ret_roles roles = {0};
    enum mieb_sim sim;
    char fp[32] = "";
    MIEB_TRY(mieb_sim_parse(plan->ref.similarity, &sim));
    mieb_status st = mieb_ret_subset_load(task, td, split, subset, &s);
    if (st != MIEB_OK)
        return st;
    st = mieb_ret_roles_open(&(struct mieb_emb_source){.dir = o->emb_dir}, sim, task->name, split, subset, &s, &roles);
    if (st == MIEB_OK)
        st = mieb_ret_fingerprint(&s, &roles, fp);
    if (st == MIEB_OK && strcmp(fp, plan->ref.fingerprint))
        problem(pr, "%s /%s/%s: the parts were computed from other inputs than --task-data %s / --embeddings %s "
                    "(input fingerprint %s in the parts, %s now)", task->name, split, subset, o->task_data,
                o->emb_dir, plan->ref.fingerprint, fp);
    mieb_ret_roles_close(&roles);
    mieb_ret_subset_free(&s);
    return st;
}

/* ---- phase 2: replay ---- */

struct replay_buf {
    float *s;
    int64_t *d;
    int64_t cap;
};

static mieb_status buf_reserve(struct replay_buf *b, int64_t n)
{
    if (n <= b->cap)
        return MIEB_OK;
    float *s = realloc(b->s, sizeof(float) * (size_t)n);
    if (s)
        b->s = s;
    int64_t *d = realloc(b->d, sizeof(int64_t) * (size_t)n);
    if (d)
        b->d = d;
    if (!s || !d)
        return mieb_fail(MIEB_ERR_OOM, "merge buffer of %lld entries", (long long)n);
    b->cap = n;
    return MIEB_OK;
}

/* Offer part p's entries for tile queries [q0, q0+nt) to the heaps, in the order they were accepted. */
static mieb_status replay_part(struct mieb_partial_reader *r, const struct mieb_partial_meta *m, int64_t q0,
                               int64_t nt, struct mieb_pyheap *heaps, struct replay_buf *b)
{
    const int64_t *ind = mieb_partial_indptr(r);
    int64_t e0 = ind[q0], e1 = ind[q0 + nt];
    /* a document outside the part's rows would be a corrupt file (and an out-of-range id lookup) */
    int64_t lo = m->item_start, hi = m->item_end;
    if (!strcmp(m->kind, MIEB_PARTIAL_CANDIDATES))
        lo = 0, hi = m->n_corpus;
    MIEB_TRY(buf_reserve(b, e1 - e0));
    MIEB_TRY(mieb_partial_read(r, e0, e1, b->s, b->d));
    for (int64_t t = 0; t < nt; t++)
        for (int64_t e = ind[q0 + t] - e0; e < ind[q0 + t + 1] - e0; e++) {
            if (b->d[e] < lo || b->d[e] >= hi)
                return mieb_fail(MIEB_ERR_BAD_DATA, "%s: /doc[%lld] = %lld is outside the part's rows %lld..%lld",
                                 mieb_partial_file(r), (long long)(e0 + e), (long long)b->d[e], (long long)lo,
                                 (long long)hi);
            mieb_pyheap_offer(&heaps[t], MIEB_MTEB_TOP_K, b->s[e], b->d[e]);
        }
    return MIEB_OK;
}

static mieb_status merge_subset(const struct mieb_task *task, struct mieb_taskdata *td, const char *split,
                                const char *subset, const struct mieb_merge_opts *o, const struct subset_plan *plan,
                                cJSON *sub)
{
    int64_t k = plan->n_parts;
    struct mieb_partial_reader **rd = calloc((size_t)k, sizeof *rd);
    struct mieb_partial_meta *metas = calloc((size_t)k, sizeof *metas);
    struct mieb_pyheap *heaps = calloc(MERGE_TILE, sizeof *heaps);
    struct replay_buf buf = {0};
    struct mieb_ret_subset s;
    struct mieb_ret_post *post = NULL;
    mieb_status st = rd && metas && heaps ? MIEB_OK : mieb_fail(MIEB_ERR_OOM, "merge state");
    memset(&s, 0, sizeof s);
    for (int64_t p = 0; p < k && st == MIEB_OK; p++) {
        char path[PATH_MAX];
        st = mieb_partial_path(o->dir, task->name, split, subset, p, k, path, sizeof path);
        if (st == MIEB_OK)
            st = mieb_partial_open(path, &rd[p], &metas[p]);
    }
    if (st == MIEB_OK)
        st = mieb_ret_subset_load(task, td, split, subset, &s);
    if (st == MIEB_OK && (s.n_kept != plan->ref.n_kept ||
                          memcmp(s.kept, mieb_partial_query_rows(rd[0]), sizeof(int64_t) * (size_t)s.n_kept)))
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: its queries are not the ones %s keeps in %s",
                       mieb_partial_file(rd[0]), mieb_taskdata_path(td), s.grp);
    if (st == MIEB_OK)
        st = mieb_ret_post_open(&s, o->per_query_dir, task->name, split, subset, o->n_threads, &post);
    for (int64_t q0 = 0; q0 < s.n_kept && st == MIEB_OK; q0 += MERGE_TILE) {
        int64_t nt = s.n_kept - q0 < MERGE_TILE ? s.n_kept - q0 : MERGE_TILE;
        struct mieb_search_out so;
        st = mieb_search_out_alloc(&so, nt, MIEB_MTEB_TOP_K, false);
        if (st != MIEB_OK)
            break;
        for (int64_t t = 0; t < nt; t++)
            mieb_pyheap_init(&heaps[t], so.res_s + t * MIEB_MTEB_TOP_K, so.res_d + t * MIEB_MTEB_TOP_K,
                             MIEB_MTEB_TOP_K, (const char *const *)s.rd.corpus_ids);
        for (int64_t p = 0; p < k && st == MIEB_OK; p++) /* parts in order = mteb's chunk order */
            st = replay_part(rd[p], &metas[p], q0, nt, heaps, &buf);
        for (int64_t t = 0; t < nt; t++)
            so.res_n[t] = heaps[t].n;
        if (st == MIEB_OK)
            st = mieb_ret_post_add(post, s.kept + q0, &so);
        mieb_search_out_free(&so);
    }
    if (st == MIEB_OK)
        st = mieb_ret_post_finish(post, sub);
    mieb_ret_post_free(post);
    mieb_ret_subset_free(&s);
    for (int64_t p = 0; rd && p < k; p++)
        mieb_partial_close(rd[p]);
    free(rd);
    free(metas);
    free(heaps);
    free(buf.s);
    free(buf.d);
    return st;
}

mieb_status mieb_merge_task(const struct mieb_task *task, const struct mieb_merge_opts *o)
{
    char path[PATH_MAX];
    struct mieb_taskdata *td = NULL;
    struct problems pr = {0};
    int n_sub = task->n_splits * task->n_subsets;
    struct subset_plan *plans = calloc((size_t)(n_sub + 1), sizeof *plans);
    double t0 = mieb_now();
    cJSON *scores = NULL, *phases = NULL;
    mieb_status st = MIEB_OK;

    if (task->family != MIEB_FAMILY_RETRIEVAL)
        st = mieb_fail(MIEB_ERR_INTERNAL, "task %s is not a retrieval task", task->name);
    else if (!plans)
        st = mieb_fail(MIEB_ERR_OOM, "merge plan");
    else if (snprintf(path, sizeof path, "%s/%s.h5", o->task_data, task->name) >= (int)sizeof path)
        st = mieb_fail(MIEB_ERR_INVALID_ARG, "path too long");
    if (st == MIEB_OK)
        st = mieb_taskdata_open(path, task->name, &td);
    /* phase 1: every part file of every subset, all problems listed at once */
    for (int i = 0; i < n_sub && st == MIEB_OK; i++) {
        const char *split = task->splits[i / task->n_subsets], *subset = task->subsets[i % task->n_subsets];
        if (!mieb_taskdata_has_group(td, split, subset))
            problem(&pr, "%s: group /%s/%s is missing (task %s evaluates split %s, subset %s)", path, split, subset,
                    task->name, split, subset);
        else
            check_subset(task, split, subset, o, &pr, &plans[i]);
    }
    for (int i = 0; i < n_sub && st == MIEB_OK && pr.n == 0; i++)
        st = check_inputs(task, td, task->splits[i / task->n_subsets], task->subsets[i % task->n_subsets], o,
                          &plans[i], &pr);
    if (st == MIEB_OK && pr.n)
        st = mieb_fail(pr.n_missing ? MIEB_ERR_NOT_FOUND : MIEB_ERR_BAD_DATA,
                       "%s: cannot merge (partials in %s; nothing written):%s", task->name, o->dir,
                       pr.buf ? pr.buf : " out of memory");
    free(pr.buf);

    /* phase 2: replay and score, then the results file */
    if (st == MIEB_OK) {
        scores = cJSON_CreateObject();
        phases = cJSON_CreateArray();
        mieb_results_add_phase(phases, "Data loading", 0.0, mieb_now() - t0, "", "");
    }
    for (int sp = 0; sp < task->n_splits && st == MIEB_OK; sp++) {
        const char *split = task->splits[sp];
        cJSON *list = cJSON_AddArrayToObject(scores, split);
        for (int h = 0; h < task->n_subsets && st == MIEB_OK; h++) {
            const char *subset = task->subsets[h];
            const struct subset_plan *plan = &plans[sp * task->n_subsets + h];
            double ts = mieb_now() - t0;
            cJSON *sub = cJSON_CreateObject();
            cJSON_AddItemToArray(list, sub);
            st = merge_subset(task, td, split, subset, o, plan, sub);
            if (st != MIEB_OK)
                break;
            /* what run's scoring loop (plan/run_loop.c) adds to each subset, in the same order */
            if ((st = mieb_results_finish_subset(sub, task, subset, plan->ref.precision)) != MIEB_OK)
                break;
            mieb_results_add_phase(phases, "Evaluation (merge of corpus parts)", ts, mieb_now() - t0, split, subset);
        }
    }
    if (st == MIEB_OK) {
        struct mieb_task_result r = {
            .dataset_revision = mieb_taskdata_revision(td)[0] ? mieb_taskdata_revision(td) : task->revision,
            .task_name = task->name,
            .scores = scores,
            .evaluation_time = mieb_now() - t0,
            .date = mieb_results_date_now(),
            .phases = phases,
            .round_fn = mieb_family_round_fn(task->family),
        };
        st = mieb_results_write(o->results_dir, &r);
    }
    cJSON_Delete(scores);
    cJSON_Delete(phases);
    mieb_taskdata_close(td);
    free(plans);
    return st;
}
