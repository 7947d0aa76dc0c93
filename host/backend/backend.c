/* backend.c - the NULL-checked operation wrappers of the backend interface. */
#include "backend.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

void mieb_backend_free(struct mieb_backend *be)
{
    if (be)
        be->iface.free(be);
}

/* The batch is one operation in three slots: a backend has all of them or none is used. */
static bool has_lr_batch(const struct mieb_backend *be)
{
    return be->iface.lr_open && be->iface.lr_eval && be->iface.lr_close;
}

mieb_status mieb_backend_supports(struct mieb_backend *be, const struct mieb_op_desc *op)
{
    static const char *const names[] = {"kmeans_assign", "sts_pairs", "compo_scores",
                                        "logistic-regression batches", "lr_predict"};
    bool has = false;
    switch (op->op) {
    case MIEB_OP_KMEANS_ASSIGN: has = be->iface.kmeans_assign != NULL; break;
    case MIEB_OP_STS_PAIRS: has = be->iface.sts_pairs != NULL; break;
    case MIEB_OP_COMPO_SCORES: has = be->iface.compo_scores != NULL; break;
    case MIEB_OP_LR_BATCH: has = has_lr_batch(be); break;
    case MIEB_OP_LR_PREDICT: has = be->iface.lr_predict != NULL; break;
    }
    if (!has)
        return mieb_fail(MIEB_ERR_UNSUPPORTED, "%s backend: %s", be->iface.name,
                         (unsigned)op->op < sizeof names / sizeof *names ? names[op->op] : "unknown operation");
    return be->iface.supports ? be->iface.supports(be, op) : MIEB_OK;
}

mieb_status mieb_backend_prepare_queries(struct mieb_backend *be, const struct mieb_vecs *q,
                                         enum mieb_sim sim, struct mieb_qset **out)
{
    if (!be->iface.prepare_queries)
        return mieb_fail(MIEB_ERR_UNSUPPORTED, "%s backend: prepare_queries", be->iface.name);
    return be->iface.prepare_queries(be, q, sim, out);
}

void mieb_backend_release_queries(struct mieb_backend *be, struct mieb_qset *qs)
{
    if (qs && be->iface.release_queries)
        be->iface.release_queries(be, qs);
}

mieb_status mieb_backend_topk_block(struct mieb_backend *be, struct mieb_qset *qs,
                                    const struct mieb_vecs *docs, int64_t k,
                                    float *out_scores, int64_t *out_idx)
{
    if (!be->iface.topk_block)
        return mieb_fail(MIEB_ERR_UNSUPPORTED, "%s backend: topk_block", be->iface.name);
    return be->iface.topk_block(be, qs, docs, k, out_scores, out_idx);
}

mieb_status mieb_backend_topk_block_floor(struct mieb_backend *be, struct mieb_qset *qs, int64_t n_queries,
                                          const struct mieb_vecs *docs, int64_t k, const float *floor,
                                          float *out_scores, int64_t *out_idx, int64_t *out_n)
{
    if (be->iface.topk_block_floor)
        return be->iface.topk_block_floor(be, qs, docs, k, floor, out_scores, out_idx, out_n);
    /* the backend has no floor of its own: its whole lists, each counted down to its floor */
    MIEB_TRY(mieb_backend_topk_block(be, qs, docs, k, out_scores, out_idx));
    int64_t keep = k <= 0 ? 0 : k < docs->n ? k : docs->n;
    for (int64_t q = 0; q < n_queries; q++)
        out_n[q] = mieb_topk_floor_head(out_scores + q * k, keep, floor ? floor[q] : -INFINITY);
    return MIEB_OK;
}

mieb_status mieb_backend_score_pairs(struct mieb_backend *be, struct mieb_qset *qs,
                                     const struct mieb_vecs *docs, int64_t n_pairs,
                                     const int64_t *qi, const int64_t *di, float *out)
{
    if (!be->iface.score_pairs)
        return mieb_fail(MIEB_ERR_UNSUPPORTED, "%s backend: score_pairs", be->iface.name);
    return be->iface.score_pairs(be, qs, docs, n_pairs, qi, di, out);
}

int64_t mieb_backend_max_block_rows(struct mieb_backend *be, struct mieb_qset *qs, int64_t dim, int64_t k)
{
    return be->iface.max_block_rows ? be->iface.max_block_rows(be, qs, dim, k) : INT64_MAX;
}

mieb_status mieb_backend_lr_open(struct mieb_backend *be, const float *X, const int64_t *y, int64_t n_problems,
                                 int64_t n, int64_t D, int64_t K, struct mieb_lr_set **out)
{
    *out = NULL;
    if (!has_lr_batch(be))
        return mieb_fail(MIEB_ERR_UNSUPPORTED, "%s backend: lr_open", be->iface.name);
    return be->iface.lr_open(be, X, y, n_problems, n, D, K, out);
}

mieb_status mieb_backend_lr_eval(struct mieb_backend *be, struct mieb_lr_set *s, int64_t n_active,
                                 const int64_t *which, const float *wt, float *lossv, float *grad)
{
    if (!has_lr_batch(be))
        return mieb_fail(MIEB_ERR_UNSUPPORTED, "%s backend: lr_eval", be->iface.name);
    return be->iface.lr_eval(be, s, n_active, which, wt, lossv, grad);
}

void mieb_backend_lr_close(struct mieb_backend *be, struct mieb_lr_set *s)
{
    if (s && be->iface.lr_close)
        be->iface.lr_close(be, s);
}
