/* fingerprint.c - hash of a retrieval subset's inputs (fingerprint.h). */
#include "fingerprint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL
#define QUERY_BLOCK 4096 /* query items hashed per read */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= FNV_PRIME;
    }
    return h;
}

static uint64_t fnv_i64(uint64_t h, int64_t v) { return fnv(h, &v, sizeof v); }

static uint64_t hash_ids(uint64_t h, char **ids, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        h = fnv(h, ids[i], strlen(ids[i]) + 1);
    return h;
}

static uint64_t hash_info(uint64_t h, const struct mieb_emb_info *i)
{
    h = fnv_i64(h, i->n_items);
    h = fnv_i64(h, i->n_rows);
    h = fnv_i64(h, i->dim);
    h = fnv_i64(h, i->multivector);
    return fnv_i64(h, (int64_t)i->dtype);
}

/* Hash items [a, b) of a role as float32 values (+ their relative offsets). */
static mieb_status hash_items(uint64_t *h, struct mieb_emb_role *r, int64_t a, int64_t b)
{
    const struct mieb_emb_info *info = mieb_emb_role_info(r);
    int64_t rows = b - a;
    if (b <= a)
        return MIEB_OK;
    if (info->multivector)
        MIEB_TRY(mieb_emb_role_rows_of(r, a, b - a, &rows));
    float *buf = malloc(sizeof(float) * (size_t)(rows * info->dim + 1));
    int64_t *off = info->multivector ? malloc(sizeof(int64_t) * (size_t)(b - a + 1)) : NULL;
    if (!buf || (info->multivector && !off)) {
        free(buf);
        free(off);
        return mieb_fail(MIEB_ERR_OOM, "fingerprint buffer of %lld rows", (long long)rows);
    }
    mieb_status st = mieb_emb_role_read(r, a, b - a, buf, off);
    if (st == MIEB_OK) {
        *h = fnv(*h, buf, sizeof(float) * (size_t)(rows * info->dim));
        if (off)
            *h = fnv(*h, off, sizeof(int64_t) * (size_t)(b - a + 1));
    }
    free(buf);
    free(off);
    return st;
}

mieb_status mieb_ret_fingerprint(const struct mieb_ret_subset *s, struct mieb_ret_roles *roles, char *out)
{
    const struct mieb_retrieval_data *rd = &s->rd;
    uint64_t h = FNV_OFFSET;
    int64_t nnz = rd->qrels_indptr[rd->n_queries];
    h = fnv_i64(h, rd->n_queries);
    h = fnv_i64(h, rd->n_corpus);
    h = hash_ids(h, rd->query_ids, rd->n_queries);
    h = hash_ids(h, rd->corpus_ids, rd->n_corpus);
    h = fnv(h, rd->qrels_indptr, sizeof(int64_t) * (size_t)(rd->n_queries + 1));
    h = fnv(h, rd->qrels_doc, sizeof(int64_t) * (size_t)nnz);
    h = fnv(h, rd->qrels_score, sizeof(int32_t) * (size_t)nnz);
    h = fnv_i64(h, rd->cand_indptr != NULL);
    if (rd->cand_indptr) {
        h = fnv(h, rd->cand_indptr, sizeof(int64_t) * (size_t)(rd->n_queries + 1));
        h = fnv(h, rd->cand_doc, sizeof(int64_t) * (size_t)rd->cand_indptr[rd->n_queries]);
    }
    const struct mieb_emb_info *qi = mieb_emb_role_info(roles->q), *ci = mieb_emb_role_info(roles->c);
    h = hash_info(h, qi);
    h = hash_info(h, ci);
    for (int64_t a = 0; a < qi->n_items; a += QUERY_BLOCK)
        MIEB_TRY(hash_items(&h, roles->q, a, a + QUERY_BLOCK < qi->n_items ? a + QUERY_BLOCK : qi->n_items));
    for (int64_t a = 0; a < ci->n_items; a += MIEB_MTEB_CORPUS_CHUNK)
        MIEB_TRY(hash_items(&h, roles->c, a, a + 1));
    if (ci->n_items > 0)
        MIEB_TRY(hash_items(&h, roles->c, ci->n_items - 1, ci->n_items));
    snprintf(out, 17, "%016llx", (unsigned long long)h);
    return MIEB_OK;
}
