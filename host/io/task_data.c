/* task_data.c - open and validate task-data files (FORMAT.md §1); retrieval ground truth and typed readers. */
#include "task_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../hdf5/h5_read.h"
#include "../hdf5/h5_util.h"

struct mieb_taskdata {
    hid_t file;
    int64_t file_size;
    char *path;
    char *task_name;
    char *revision;
};

#define PATH_MAX_LEN 1024

mieb_status mieb_taskdata_open(const char *path, const char *expect_task, struct mieb_taskdata **out)
{
    struct mieb_taskdata *td = calloc(1, sizeof *td);
    char *fmt = NULL;
    int64_t ver = 0;
    mieb_status st;
    if (!td)
        return mieb_fail(MIEB_ERR_OOM, "%s: out of memory", path);
    td->file = -1;
    td->path = strdup(path);
    if (!td->path) {
        free(td);
        return mieb_fail(MIEB_ERR_OOM, "%s: out of memory", path);
    }
    mieb_h5_lock();
    if ((st = mieb_h5_open_ro(path, &td->file, &td->file_size)) != MIEB_OK)
        goto fail;
    if ((st = mieb_h5_attr_str(td->file, "format", path, "/", &fmt)) != MIEB_OK)
        goto fail;
    if (strcmp(fmt, "mieb-task") != 0) {
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: /: attribute format is '%s', expected 'mieb-task'", path, fmt);
        goto fail;
    }
    if ((st = mieb_h5_attr_i64(td->file, "format_version", path, "/", &ver)) != MIEB_OK)
        goto fail;
    if (ver != 1) {
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: /: format_version is %lld, this program reads version 1", path,
                       (long long)ver);
        goto fail;
    }
    if ((st = mieb_h5_attr_str(td->file, "task_name", path, "/", &td->task_name)) != MIEB_OK)
        goto fail;
    if (expect_task && strcmp(td->task_name, expect_task) != 0) {
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: /: task_name is '%s', expected '%s'", path, td->task_name,
                       expect_task);
        goto fail;
    }
    /* The results file reports dataset_revision, so it is required, not optional. */
    if ((st = mieb_h5_attr_str(td->file, "dataset_revision", path, "/", &td->revision)) != MIEB_OK)
        goto fail;
    mieb_h5_unlock();
    free(fmt);
    *out = td;
    return MIEB_OK;
fail:
    mieb_h5_unlock();
    free(fmt);
    mieb_taskdata_close(td);
    return st;
}

void mieb_taskdata_close(struct mieb_taskdata *td)
{
    if (!td)
        return;
    if (td->file >= 0) {
        mieb_h5_lock();
        H5Fclose(td->file);
        mieb_h5_unlock();
    }
    free(td->path);
    free(td->task_name);
    free(td->revision);
    free(td);
}

const char *mieb_taskdata_path(const struct mieb_taskdata *td) { return td->path; }
const char *mieb_taskdata_revision(const struct mieb_taskdata *td) { return td->revision; }

static void group_path(char *buf, const char *split, const char *subset, const char *name)
{
    if (name)
        snprintf(buf, PATH_MAX_LEN, "/%s/%s/%s", split, subset, name);
    else
        snprintf(buf, PATH_MAX_LEN, "/%s/%s", split, subset);
}

bool mieb_taskdata_has_group(struct mieb_taskdata *td, const char *split, const char *subset)
{
    char p[PATH_MAX_LEN];
    group_path(p, split, subset, NULL);
    bool ok = false, found;
    if (mieb_h5_lookup(td->file, p, td->path, &found) != MIEB_OK)
        return true; /* in doubt (a refused header, I/O): the readers report the fault */
    mieb_h5_lock();
    if (found) {
        hid_t o = H5Oopen(td->file, p, H5P_DEFAULT);
        if (o >= 0) {
            ok = H5Iget_type(o) == H5I_GROUP;
            H5Oclose(o);
        } else {
            ok = true; /* it is there but cannot be opened (I/O, memory): the readers say why */
        }
        H5Eclear2(H5E_DEFAULT);
    }
    mieb_h5_unlock();
    return ok;
}

bool mieb_taskdata_has_dataset(struct mieb_taskdata *td, const char *split, const char *subset, const char *name)
{
    char p[PATH_MAX_LEN];
    group_path(p, split, subset, name);
    return mieb_h5_is_dataset(td->file, p);
}

static mieb_status need_group(struct mieb_taskdata *td, const char *split, const char *subset)
{
    char p[PATH_MAX_LEN];
    if (mieb_taskdata_has_group(td, split, subset))
        return MIEB_OK;
    group_path(p, split, subset, NULL);
    return mieb_fail(MIEB_ERR_NOT_FOUND, "%s: %s: group is missing (no data for split '%s', subset '%s')", td->path,
                     p, split, subset);
}

mieb_status mieb_taskdata_read_i64(struct mieb_taskdata *td, const char *split, const char *subset,
                                   const char *name, int64_t **out, int64_t *nrows, int64_t *ncols)
{
    char p[PATH_MAX_LEN];
    int64_t dims[2];
    MIEB_TRY(need_group(td, split, subset));
    group_path(p, split, subset, name);
    int rank = ncols ? 2 : 1;
    MIEB_TRY(mieb_h5_read_i64(td->file, td->path, p, rank, rank, td->file_size, out, dims));
    *nrows = dims[0];
    if (ncols)
        *ncols = dims[1];
    return MIEB_OK;
}

mieb_status mieb_taskdata_read_f64(struct mieb_taskdata *td, const char *split, const char *subset,
                                   const char *name, double **out, int64_t *n)
{
    char p[PATH_MAX_LEN];
    MIEB_TRY(need_group(td, split, subset));
    group_path(p, split, subset, name);
    return mieb_h5_read_f64(td->file, td->path, p, td->file_size, out, n);
}

/* Shared body of the two group-attribute readers. */
static mieb_status group_attr(struct mieb_taskdata *td, const char *split, const char *subset, const char *name,
                              int64_t *i_out, double *d_out)
{
    char p[PATH_MAX_LEN];
    mieb_status st;
    MIEB_TRY(need_group(td, split, subset));
    group_path(p, split, subset, NULL);
    bool found;
    MIEB_TRY(mieb_h5_lookup(td->file, p, td->path, &found)); /* its header, before HDF5 loads it */
    mieb_h5_lock();
    hid_t g = H5Gopen2(td->file, p, H5P_DEFAULT);
    if (g < 0) {
        st = mieb_h5_fail(MIEB_ERR_HDF5, "%s: %s: cannot open group", td->path, p);
    } else {
        st = i_out ? mieb_h5_attr_i64(g, name, td->path, p, i_out) : mieb_h5_attr_f64(g, name, td->path, p, d_out);
        H5Gclose(g);
    }
    mieb_h5_unlock();
    return st;
}

mieb_status mieb_taskdata_group_attr_i64(struct mieb_taskdata *td, const char *split, const char *subset,
                                         const char *name, int64_t *out)
{
    return group_attr(td, split, subset, name, out, NULL);
}

mieb_status mieb_taskdata_group_attr_f64(struct mieb_taskdata *td, const char *split, const char *subset,
                                         const char *name, double *out)
{
    return group_attr(td, split, subset, name, NULL, out);
}

/* ---- retrieval ---- */

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* ids are dict keys in mteb, so a repeated id would silently merge two rows: refuse it. */
static mieb_status check_unique(char **ids, int64_t n, const char *fname, const char *dpath)
{
    size_t cap = 16;
    while (cap < (size_t)n * 2)
        cap *= 2;
    int64_t *slot = malloc(cap * sizeof *slot);
    if (!slot)
        return mieb_fail(MIEB_ERR_OOM, "%s: %s: out of memory checking ids", fname, dpath);
    memset(slot, 0xff, cap * sizeof *slot); /* -1 = empty */
    mieb_status st = MIEB_OK;
    for (int64_t i = 0; i < n && st == MIEB_OK; i++) {
        size_t h = (size_t)fnv1a(ids[i]) & (cap - 1);
        while (slot[h] >= 0) {
            if (strcmp(ids[slot[h]], ids[i]) == 0) {
                st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s[%lld] = '%s' repeats %s[%lld]", fname, dpath,
                               (long long)i, ids[i], dpath, (long long)slot[h]);
                break;
            }
            h = (h + 1) & (cap - 1);
        }
        slot[h] = i;
    }
    free(slot);
    return st;
}

/*
 * Validate a CSR pair: indptr [nq+1] from 0, non-decreasing, ending at the length of doc;
 * every doc in [0, n_corpus) and no doc twice within one query. mark is scratch [n_corpus].
 */
static mieb_status check_csr(const char *fname, const char *gp, const char *ip_name, const char *doc_name,
                             const int64_t *indptr, int64_t n_indptr, const int64_t *doc, int64_t nnz, int64_t nq,
                             int64_t n_corpus, int64_t *mark)
{
    if (n_indptr != nq + 1)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s/%s has %lld entries, expected n_queries+1 = %lld", fname, gp,
                         ip_name, (long long)n_indptr, (long long)(nq + 1));
    if (indptr[0] != 0)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s/%s[0] = %lld, expected 0", fname, gp, ip_name,
                         (long long)indptr[0]);
    for (int64_t i = 0; i < nq; i++)
        if (indptr[i + 1] < indptr[i])
            return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s/%s decreases at [%lld]: %lld after %lld", fname, gp, ip_name,
                             (long long)(i + 1), (long long)indptr[i + 1], (long long)indptr[i]);
    if (indptr[nq] != nnz)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s/%s[%lld] = %lld, but %s has %lld entries", fname, gp, ip_name,
                         (long long)nq, (long long)indptr[nq], doc_name, (long long)nnz);
    for (int64_t j = 0; j < nnz; j++)
        if (doc[j] < 0 || doc[j] >= n_corpus)
            return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s/%s[%lld] = %lld is outside corpus_ids (n=%lld)", fname, gp,
                             doc_name, (long long)j, (long long)doc[j], (long long)n_corpus);
    for (int64_t c = 0; c < n_corpus; c++)
        mark[c] = -1;
    for (int64_t i = 0; i < nq; i++)
        for (int64_t j = indptr[i]; j < indptr[i + 1]; j++) {
            if (mark[doc[j]] == i)
                return mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s/%s[%lld]: query %lld lists document %lld twice", fname,
                                 gp, doc_name, (long long)j, (long long)i, (long long)doc[j]);
            mark[doc[j]] = i;
        }
    return MIEB_OK;
}

mieb_status mieb_taskdata_read_retrieval(struct mieb_taskdata *td, const char *split, const char *subset,
                                         struct mieb_retrieval_data *out)
{
    struct mieb_retrieval_data rd = {0};
    char gp[PATH_MAX_LEN], p[PATH_MAX_LEN];
    int64_t d[2], n_ip, nnz, n_sc, *score64 = NULL, *mark = NULL;
    mieb_status st;
    const char *f = td->path, *gpc = gp;

    MIEB_TRY(need_group(td, split, subset));
    group_path(gp, split, subset, NULL);
    mieb_h5_lock();
#define READ_OR_FAIL(expr)          \
    do {                            \
        if ((st = (expr)) != MIEB_OK) \
            goto fail;              \
    } while (0)
    group_path(p, split, subset, "query_ids");
    READ_OR_FAIL(mieb_h5_read_strings(td->file, f, p, td->file_size, &rd.query_ids, &rd.n_queries));
    READ_OR_FAIL(check_unique(rd.query_ids, rd.n_queries, f, p));
    group_path(p, split, subset, "corpus_ids");
    READ_OR_FAIL(mieb_h5_read_strings(td->file, f, p, td->file_size, &rd.corpus_ids, &rd.n_corpus));
    READ_OR_FAIL(check_unique(rd.corpus_ids, rd.n_corpus, f, p));

    group_path(p, split, subset, "qrels_indptr");
    READ_OR_FAIL(mieb_h5_read_i64(td->file, f, p, 1, 1, td->file_size, &rd.qrels_indptr, d));
    n_ip = d[0];
    group_path(p, split, subset, "qrels_doc");
    READ_OR_FAIL(mieb_h5_read_i64(td->file, f, p, 1, 1, td->file_size, &rd.qrels_doc, d));
    nnz = d[0];
    group_path(p, split, subset, "qrels_score");
    READ_OR_FAIL(mieb_h5_read_i64(td->file, f, p, 1, 1, td->file_size, &score64, d));
    n_sc = d[0];
    if (n_sc != nnz) {
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s/qrels_score has %lld entries, qrels_doc has %lld", f, gpc,
                       (long long)n_sc, (long long)nnz);
        goto fail;
    }
    mark = malloc((size_t)(rd.n_corpus ? rd.n_corpus : 1) * sizeof *mark);
    rd.qrels_score = malloc((size_t)(nnz ? nnz : 1) * sizeof *rd.qrels_score);
    if (!mark || !rd.qrels_score) {
        st = mieb_fail(MIEB_ERR_OOM, "%s: %s: out of memory", f, gpc);
        goto fail;
    }
    for (int64_t j = 0; j < nnz; j++) {
        if (score64[j] < INT32_MIN || score64[j] > INT32_MAX) {
            st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s/qrels_score[%lld] = %lld does not fit int32", f, gpc,
                           (long long)j, (long long)score64[j]);
            goto fail;
        }
        rd.qrels_score[j] = (int32_t)score64[j];
    }
    READ_OR_FAIL(check_csr(f, gpc, "qrels_indptr", "qrels_doc", rd.qrels_indptr, n_ip, rd.qrels_doc, nnz,
                           rd.n_queries, rd.n_corpus, mark));

    bool has_ip, has_doc; /* optional: a failed lookup is an error, not "absent" */
    group_path(p, split, subset, "candidates_indptr");
    READ_OR_FAIL(mieb_h5_lookup(td->file, p, f, &has_ip));
    group_path(p, split, subset, "candidates_doc");
    READ_OR_FAIL(mieb_h5_lookup(td->file, p, f, &has_doc));
    if (has_ip != has_doc) {
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s/%s is present without %s/%s", f, gpc,
                       has_ip ? "candidates_indptr" : "candidates_doc", gpc,
                       has_ip ? "candidates_doc" : "candidates_indptr");
        goto fail;
    }
    if (has_ip) {
        int64_t n_cip, m;
        group_path(p, split, subset, "candidates_indptr");
        READ_OR_FAIL(mieb_h5_read_i64(td->file, f, p, 1, 1, td->file_size, &rd.cand_indptr, d));
        n_cip = d[0];
        group_path(p, split, subset, "candidates_doc");
        READ_OR_FAIL(mieb_h5_read_i64(td->file, f, p, 1, 1, td->file_size, &rd.cand_doc, d));
        m = d[0];
        READ_OR_FAIL(check_csr(f, gpc, "candidates_indptr", "candidates_doc", rd.cand_indptr, n_cip, rd.cand_doc, m,
                               rd.n_queries, rd.n_corpus, mark));
    }
#undef READ_OR_FAIL
    mieb_h5_unlock();
    free(score64);
    free(mark);
    *out = rd;
    return MIEB_OK;
fail:
    mieb_h5_unlock();
    free(score64);
    free(mark);
    mieb_retrieval_data_free(&rd);
    return st;
}

void mieb_retrieval_data_free(struct mieb_retrieval_data *rd)
{
    if (!rd)
        return;
    free(rd->query_ids); /* one block each: pointers + bytes */
    free(rd->corpus_ids);
    free(rd->qrels_indptr);
    free(rd->qrels_doc);
    free(rd->qrels_score);
    free(rd->cand_indptr);
    free(rd->cand_doc);
    memset(rd, 0, sizeof *rd);
}
