/* partial.c - partial-result files of corpus parts: naming, writer and reader (partial.h). */
#include "partial.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../hdf5/h5_append.h"
#include "../hdf5/h5_util.h"
#include "../hdf5/h5_write.h"

#define APPEND_CHUNK 65536 /* elements per HDF5 chunk of /score and /doc */

void mieb_partial_range(const char *kind, int64_t n_corpus, int64_t part, int64_t n_parts, int64_t *chunk_start,
                        int64_t *chunk_end, int64_t *item_start, int64_t *item_end)
{
    int64_t n_chunks = (n_corpus + MIEB_MTEB_CORPUS_CHUNK - 1) / MIEB_MTEB_CORPUS_CHUNK;
    int64_t c0, c1;
    if (!strcmp(kind, MIEB_PARTIAL_CANDIDATES)) {
        /* candidate scoring reads every query's candidates anywhere in the corpus: part 0 does it all */
        c0 = part == 0 ? 0 : n_chunks;
        c1 = n_chunks;
    } else {
        /* contiguous chunk ranges, as even as whole chunks allow; parts beyond the chunk count are empty */
        c0 = part * n_chunks / n_parts;
        c1 = (part + 1) * n_chunks / n_parts;
    }
    *chunk_start = c0;
    *chunk_end = c1;
    *item_start = c0 * MIEB_MTEB_CORPUS_CHUNK < n_corpus ? c0 * MIEB_MTEB_CORPUS_CHUNK : n_corpus;
    *item_end = c1 * MIEB_MTEB_CORPUS_CHUNK < n_corpus ? c1 * MIEB_MTEB_CORPUS_CHUNK : n_corpus;
}

mieb_status mieb_partial_dir(const char *dir, const char *task, const char *split, const char *subset, char *buf,
                             size_t n)
{
    if ((size_t)snprintf(buf, n, "%s/%s/%s/%s", dir, task, split, subset) >= n)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "--partials-dir: path too long");
    return MIEB_OK;
}

mieb_status mieb_partial_path(const char *dir, const char *task, const char *split, const char *subset,
                              int64_t part, int64_t n_parts, char *buf, size_t n)
{
    if ((size_t)snprintf(buf, n, "%s/%s/%s/%s/part-%05lld-of-%05lld.h5", dir, task, split, subset,
                         (long long)part, (long long)n_parts) >= n)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "--partials-dir: path too long");
    return MIEB_OK;
}

bool mieb_partial_is(const char *path, const struct mieb_partial_meta *m, const struct mieb_partial_want *w,
                     char *why, size_t n)
{
    int64_t c0, c1, i0, i1;
    if (strcmp(m->task, w->task) || strcmp(m->split, w->split) || strcmp(m->subset, w->subset) ||
        m->part != w->part || m->n_parts != w->n_parts) {
        snprintf(why, n, "%s: holds %s /%s/%s part %lld of %lld, not what its name says", path, m->task, m->split,
                 m->subset, (long long)m->part, (long long)m->n_parts);
        return false;
    }
    if (strcmp(m->model_name, w->model_name) || strcmp(m->model_revision, w->model_revision)) {
        snprintf(why, n, "%s: computed for model %s revision '%s', not the embeddings' %s revision '%s'", path, m->model_name,
                 m->model_revision, w->model_name, w->model_revision);
        return false;
    }
    if (m->top_k != MIEB_MTEB_TOP_K || m->chunk_size != MIEB_MTEB_CORPUS_CHUNK) {
        snprintf(why, n, "%s: made with top_k %lld and chunks of %lld, this mieb-eval uses %d and %d", path,
                 (long long)m->top_k, (long long)m->chunk_size, MIEB_MTEB_TOP_K, MIEB_MTEB_CORPUS_CHUNK);
        return false;
    }
    mieb_partial_range(m->kind, m->n_corpus, w->part, w->n_parts, &c0, &c1, &i0, &i1);
    if (m->chunk_start != c0 || m->chunk_end != c1 || m->item_start != i0 || m->item_end != i1) {
        snprintf(why, n, "%s: covers chunks %lld..%lld (rows %lld..%lld); part %lld of %lld must cover chunks "
                 "%lld..%lld (rows %lld..%lld)", path, (long long)m->chunk_start, (long long)m->chunk_end,
                 (long long)m->item_start, (long long)m->item_end, (long long)w->part, (long long)w->n_parts,
                 (long long)c0, (long long)c1, (long long)i0, (long long)i1);
        return false;
    }
    return true;
}

bool mieb_partial_parse_name(const char *name, int64_t *part, int64_t *n_parts)
{
    long long i = -1, k = -1;
    int used = 0;
    char again[64];
    if (sscanf(name, "part-%5lld-of-%5lld.h5%n", &i, &k, &used) != 2 || name[used] != '\0')
        return false;
    /* only the canonical spelling (zero-padded): another spelling is some other file */
    snprintf(again, sizeof again, "part-%05lld-of-%05lld.h5", i, k);
    if (strcmp(again, name) || k < 1 || i < 0 || i >= k)
        return false;
    *part = i;
    *n_parts = k;
    return true;
}

/* ---------------------------------------------------------------- writer */

struct mieb_partial_writer {
    struct mieb_h5w_file f; /* the file, its temporary and its final path */
    hid_t d_score, d_doc;
    int64_t n_kept, n_done, n_entries;
    int64_t *indptr, *rows;
};

void mieb_partial_abort(struct mieb_partial_writer *w)
{
    if (!w)
        return;
    mieb_h5_growable_discard(w->d_score);
    mieb_h5_growable_discard(w->d_doc);
    mieb_h5w_abort(&w->f);
    free(w->indptr);
    free(w->rows);
    free(w);
}

mieb_status mieb_partial_create(const char *path, int64_t n_kept, struct mieb_partial_writer **out)
{
    struct mieb_partial_writer *w = calloc(1, sizeof *w);
    if (!w)
        return mieb_fail(MIEB_ERR_OOM, "%s: partial writer", path);
    w->f.id = w->d_score = w->d_doc = -1;
    w->n_kept = n_kept;
    w->indptr = calloc((size_t)n_kept + 1, sizeof(int64_t));
    w->rows = calloc((size_t)n_kept + 1, sizeof(int64_t));
    if (!w->indptr || !w->rows) {
        mieb_partial_abort(w);
        return mieb_fail(MIEB_ERR_OOM, "%s: partial writer", path);
    }
    mieb_h5_init();
    mieb_status st = mieb_h5w_create(path, &w->f);
    if (st != MIEB_OK) {
        mieb_partial_abort(w);
        return st;
    }
    st = mieb_h5_growable_create(w->f.id, w->f.tmp, "score", MIEB_H5_F32, APPEND_CHUNK, &w->d_score);
    if (st == MIEB_OK)
        st = mieb_h5_growable_create(w->f.id, w->f.tmp, "doc", MIEB_H5_I64, APPEND_CHUNK, &w->d_doc);
    if (st != MIEB_OK) {
        mieb_partial_abort(w);
        return st;
    }
    *out = w;
    return MIEB_OK;
}

static mieb_status check_room(const struct mieb_partial_writer *w, int64_t n)
{
    if (w->n_done + n > w->n_kept)
        return mieb_fail(MIEB_ERR_INTERNAL, "%s: more queries appended (%lld) than announced (%lld)", w->f.path,
                         (long long)(w->n_done + n), (long long)w->n_kept);
    return MIEB_OK;
}

mieb_status mieb_partial_append(void *writer, const int64_t *qrow, struct mieb_search_out *so)
{
    struct mieb_partial_writer *w = writer;
    MIEB_TRY(check_room(w, so->n_queries));
    if (!so->log)
        return mieb_fail(MIEB_ERR_INTERNAL, "%s: the search did not record its offers", w->f.path);
    for (int64_t t = 0; t < so->n_queries; t++) {
        const struct mieb_offer_log *l = &so->log[t];
        MIEB_TRY(mieb_h5_growable_append(w->d_score, w->f.tmp, "score", MIEB_H5_F32, w->n_entries, l->n, l->s));
        MIEB_TRY(mieb_h5_growable_append(w->d_doc, w->f.tmp, "doc", MIEB_H5_I64, w->n_entries, l->n, l->d));
        w->n_entries += l->n;
        w->rows[w->n_done] = qrow[t];
        w->indptr[++w->n_done] = w->n_entries;
    }
    return MIEB_OK;
}

mieb_status mieb_partial_append_empty(struct mieb_partial_writer *w, const int64_t *qrow, int64_t n)
{
    MIEB_TRY(check_room(w, n));
    for (int64_t t = 0; t < n; t++) {
        w->rows[w->n_done] = qrow[t];
        w->indptr[++w->n_done] = w->n_entries;
    }
    return MIEB_OK;
}

static mieb_status write_attrs(struct mieb_partial_writer *w, const struct mieb_partial_meta *m)
{
    hid_t f = w->f.id;
    const struct { const char *k, *v; } s[] = {
        {"format", MIEB_PARTIAL_FORMAT}, {"task_name", m->task}, {"split", m->split}, {"hf_subset", m->subset},
        {"kind", m->kind}, {"model_name", m->model_name}, {"model_revision", m->model_revision},
        {"similarity", m->similarity}, {"precision", m->precision}, {"fingerprint", m->fingerprint},
    };
    const struct { const char *k; int64_t v; } i[] = {
        {"format_version", MIEB_PARTIAL_VERSION}, {"part", m->part}, {"n_parts", m->n_parts},
        {"chunk_start", m->chunk_start}, {"chunk_end", m->chunk_end}, {"item_start", m->item_start},
        {"item_end", m->item_end}, {"n_corpus", m->n_corpus}, {"n_queries", m->n_queries},
        {"n_kept", m->n_kept}, {"n_entries", m->n_entries}, {"top_k", m->top_k}, {"chunk_size", m->chunk_size},
    };
    for (size_t k = 0; k < sizeof s / sizeof s[0]; k++)
        MIEB_TRY(mieb_h5w_attr_str(f, s[k].k, s[k].v));
    for (size_t k = 0; k < sizeof i / sizeof i[0]; k++)
        MIEB_TRY(mieb_h5w_attr_i64(f, i[k].k, i[k].v));
    int64_t nq = w->n_kept, np1 = w->n_kept + 1;
    MIEB_TRY(mieb_h5w_i64(f, "query_rows", w->rows, 1, &nq));
    MIEB_TRY(mieb_h5w_i64(f, "indptr", w->indptr, 1, &np1));
    return MIEB_OK;
}

mieb_status mieb_partial_commit(struct mieb_partial_writer *w, struct mieb_partial_meta *meta)
{
    mieb_status st = MIEB_OK;
    if (w->n_done != w->n_kept)
        st = mieb_fail(MIEB_ERR_INTERNAL, "%s: %lld of %lld queries written", w->f.path, (long long)w->n_done,
                       (long long)w->n_kept);
    meta->n_kept = w->n_kept;
    meta->n_entries = w->n_entries;
    if (st == MIEB_OK)
        st = write_attrs(w, meta);
    if (st == MIEB_OK) {
        mieb_status a = mieb_h5_growable_close(w->d_score, w->f.tmp), b = mieb_h5_growable_close(w->d_doc, w->f.tmp);
        w->d_score = w->d_doc = -1;
        st = a != MIEB_OK ? a : b;
    }
    /* on disk before the rename makes it visible: a crash never leaves a truncated partial */
    if (st == MIEB_OK)
        st = mieb_h5w_commit_synced(&w->f); /* committed or not, w->f is closed and cleared */
    mieb_partial_abort(w);
    return st;
}

/* ---------------------------------------------------------------- reader */

struct mieb_partial_reader {
    char *path;
    hid_t file, d_score, d_doc;
    int64_t *indptr, *rows;
    int64_t n_kept, n_entries;
};

void mieb_partial_close(struct mieb_partial_reader *r)
{
    if (!r)
        return;
    mieb_h5_growable_discard(r->d_score);
    mieb_h5_growable_discard(r->d_doc);
    mieb_h5_file_close(r->file);
    free(r->path);
    free(r->indptr);
    free(r->rows);
    free(r);
}

static mieb_status get_str(hid_t f, const char *path, const char *name, char *dst, size_t n)
{
    char *v = NULL;
    MIEB_TRY(mieb_h5_attr_str(f, name, path, "/", &v));
    if (strlen(v) >= n) {
        free(v);
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: attribute %s is too long", path, name);
    }
    strcpy(dst, v);
    free(v);
    return MIEB_OK;
}

static mieb_status read_attrs(hid_t f, const char *path, struct mieb_partial_meta *m)
{
    char fmt[64];
    int64_t ver = 0;
    MIEB_TRY(get_str(f, path, "format", fmt, sizeof fmt));
    if (strcmp(fmt, MIEB_PARTIAL_FORMAT))
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: format is '%s', not '%s'", path, fmt, MIEB_PARTIAL_FORMAT);
    MIEB_TRY(mieb_h5_attr_i64(f, "format_version", path, "/", &ver));
    if (ver != MIEB_PARTIAL_VERSION)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: format_version %lld, this mieb-eval reads %d", path,
                         (long long)ver, MIEB_PARTIAL_VERSION);
    const struct { const char *k; char *v; size_t n; } s[] = {
        {"task_name", m->task, sizeof m->task}, {"split", m->split, sizeof m->split},
        {"hf_subset", m->subset, sizeof m->subset}, {"kind", m->kind, sizeof m->kind},
        {"model_name", m->model_name, sizeof m->model_name},
        {"model_revision", m->model_revision, sizeof m->model_revision},
        {"similarity", m->similarity, sizeof m->similarity}, {"precision", m->precision, sizeof m->precision},
        {"fingerprint", m->fingerprint, sizeof m->fingerprint},
    };
    const struct { const char *k; int64_t *v; } i[] = {
        {"part", &m->part}, {"n_parts", &m->n_parts}, {"chunk_start", &m->chunk_start},
        {"chunk_end", &m->chunk_end}, {"item_start", &m->item_start}, {"item_end", &m->item_end},
        {"n_corpus", &m->n_corpus}, {"n_queries", &m->n_queries}, {"n_kept", &m->n_kept},
        {"n_entries", &m->n_entries}, {"top_k", &m->top_k}, {"chunk_size", &m->chunk_size},
    };
    for (size_t k = 0; k < sizeof s / sizeof s[0]; k++)
        MIEB_TRY(get_str(f, path, s[k].k, s[k].v, s[k].n));
    for (size_t k = 0; k < sizeof i / sizeof i[0]; k++)
        MIEB_TRY(mieb_h5_attr_i64(f, i[k].k, path, "/", i[k].v));
    if (m->n_kept < 0 || m->n_entries < 0 || m->n_corpus < 0)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: negative counts in the attributes", path);
    return MIEB_OK;
}

/* Open 1-D dataset `name` and check it holds exactly n elements. */
static mieb_status open_1d(struct mieb_partial_reader *r, int64_t fsize, const char *name, int64_t n, hid_t *d)
{
    int rank = 0;
    int64_t dims[2] = {0, 0};
    char dp[64];
    snprintf(dp, sizeof dp, "/%s", name);
    MIEB_TRY(mieb_h5_dset_open(r->file, r->path, dp, 1, 1, fsize, d, &rank, dims));
    if (dims[0] != n)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: /%s has %lld entries, the attributes say %lld", r->path, name,
                         (long long)dims[0], (long long)n);
    return MIEB_OK;
}

mieb_status mieb_partial_open(const char *path, struct mieb_partial_reader **out, struct mieb_partial_meta *meta)
{
    struct mieb_partial_reader *r = calloc(1, sizeof *r);
    int64_t fsize = 0;
    hid_t d_rows = -1, d_ind = -1;
    if (!r)
        return mieb_fail(MIEB_ERR_OOM, "%s: partial reader", path);
    r->file = r->d_score = r->d_doc = -1;
    r->path = strdup(path);
    memset(meta, 0, sizeof *meta);
    mieb_status st = r->path ? MIEB_OK : mieb_fail(MIEB_ERR_OOM, "%s", path);
    if (st == MIEB_OK)
        st = mieb_h5_open_ro(path, &r->file, &fsize);
    if (st == MIEB_OK)
        st = read_attrs(r->file, path, meta);
    if (st == MIEB_OK) {
        r->n_kept = meta->n_kept;
        r->n_entries = meta->n_entries;
        r->indptr = malloc(sizeof(int64_t) * (size_t)(r->n_kept + 1));
        r->rows = malloc(sizeof(int64_t) * (size_t)(r->n_kept + 1));
        if (!r->indptr || !r->rows)
            st = mieb_fail(MIEB_ERR_OOM, "%s: index of %lld queries", path, (long long)r->n_kept);
    }
    if (st == MIEB_OK)
        st = open_1d(r, fsize, "query_rows", r->n_kept, &d_rows);
    if (st == MIEB_OK)
        st = open_1d(r, fsize, "indptr", r->n_kept + 1, &d_ind);
    if (st == MIEB_OK)
        st = open_1d(r, fsize, "score", r->n_entries, &r->d_score);
    if (st == MIEB_OK)
        st = open_1d(r, fsize, "doc", r->n_entries, &r->d_doc);
    if (st == MIEB_OK)
        st = mieb_h5_growable_read_all(d_rows, path, "query_rows", MIEB_H5_I64, r->rows);
    if (st == MIEB_OK)
        st = mieb_h5_growable_read_all(d_ind, path, "indptr", MIEB_H5_I64, r->indptr);
    if (st == MIEB_OK) {
        if (r->indptr[0] != 0 || r->indptr[r->n_kept] != r->n_entries)
            st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: /indptr must run from 0 to n_entries (%lld)", path,
                           (long long)r->n_entries);
        for (int64_t i = 0; st == MIEB_OK && i < r->n_kept; i++)
            if (r->indptr[i + 1] < r->indptr[i])
                st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: /indptr decreases at %lld", path, (long long)i);
    }
    mieb_h5_growable_discard(d_rows);
    mieb_h5_growable_discard(d_ind);
    if (st != MIEB_OK) {
        mieb_partial_close(r);
        return st;
    }
    *out = r;
    return MIEB_OK;
}

const int64_t *mieb_partial_indptr(const struct mieb_partial_reader *r) { return r->indptr; }
const int64_t *mieb_partial_query_rows(const struct mieb_partial_reader *r) { return r->rows; }
const char *mieb_partial_file(const struct mieb_partial_reader *r) { return r->path; }

mieb_status mieb_partial_read(struct mieb_partial_reader *r, int64_t e0, int64_t e1, float *s, int64_t *d)
{
    if (e0 < 0 || e1 > r->n_entries || e0 > e1)
        return mieb_fail(MIEB_ERR_INTERNAL, "%s: entries %lld..%lld out of range", r->path, (long long)e0,
                         (long long)e1);
    if (e0 == e1)
        return MIEB_OK;
    MIEB_TRY(mieb_h5_growable_read_range(r->d_score, r->path, "score", MIEB_H5_F32, e0, e1, s));
    MIEB_TRY(mieb_h5_growable_read_range(r->d_doc, r->path, "doc", MIEB_H5_I64, e0, e1, d));
    for (int64_t i = 0; i < e1 - e0; i++)
        if (isnan(s[i]))
            return mieb_fail(MIEB_ERR_BAD_DATA, "%s: /score[%lld] is NaN", r->path, (long long)(e0 + i));
    return MIEB_OK;
}
