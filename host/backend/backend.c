/* backend.c - backend selection from --device and the NULL-checked operation wrappers. */
#include "backend.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

mieb_status mieb_backend_init(const char *device, const struct mieb_backend_opts *opts,
                              struct mieb_backend **out)
{
    struct mieb_backend_opts o = opts ? *opts : (struct mieb_backend_opts){0};
    *out = NULL;
    if (!device || !strcmp(device, "cpu"))
        return mieb_backend_cpu_init(&o, out);
    int want_cuda = !strncmp(device, "cuda", 4);
    if (!want_cuda && strcmp(device, "auto"))
        return mieb_fail(MIEB_ERR_INVALID_ARG, "unknown --device '%s' (expected auto, cpu, cuda or cuda:N)", device);
    if (want_cuda && device[4] == ':') {
        char *end = NULL;
        long idx = strtol(device + 5, &end, 10);
        if (!end || *end || idx < 0 || end == device + 5)
            return mieb_fail(MIEB_ERR_INVALID_ARG, "bad device '%s' (expected cuda:N)", device);
        o.device_index = (int)idx;
    } else if (want_cuda && device[4] != '\0') {
        return mieb_fail(MIEB_ERR_INVALID_ARG, "unknown --device '%s'", device);
    }
#ifdef MIEB_HAVE_CUDA
    mieb_status st = mieb_backend_cuda_init(&o, out);
    if (st == MIEB_OK)
        return MIEB_OK;
    if (want_cuda)
        return st == MIEB_ERR_NO_DEVICE ? st : mieb_fail_context(MIEB_ERR_NO_DEVICE, "--device %s", device);
    const char *why = mieb_last_error(); /* said once, whether or not the reason names the device */
    if (!strncmp(why, "no usable CUDA device", 21))
        MIEB_LOGW("%s; scoring on the CPU", why);
    else
        MIEB_LOGW("no usable CUDA device (%s); scoring on the CPU", why);
#else
    if (want_cuda)
        return mieb_fail(MIEB_ERR_NO_DEVICE, "--device %s: this mieb-eval was built without CUDA", device);
    MIEB_LOGD("built without CUDA; --device auto uses the CPU");
#endif
    return mieb_backend_cpu_init(&o, out);
}

void mieb_backend_free(struct mieb_backend *be)
{
    if (be)
        be->iface.free(be);
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

bool mieb_backend_has_lr(const struct mieb_backend *be)
{
    return be && be->iface.lr_open && be->iface.lr_eval && be->iface.lr_close && be->iface.lr_predict;
}

mieb_status mieb_backend_lr_open(struct mieb_backend *be, const float *X, const int64_t *y, int64_t n_problems,
                                 int64_t n, int64_t D, int64_t K, struct mieb_lr_set **out)
{
    *out = NULL;
    if (!mieb_backend_has_lr(be))
        return mieb_fail(MIEB_ERR_UNSUPPORTED, "%s backend: lr_open", be->iface.name);
    return be->iface.lr_open(be, X, y, n_problems, n, D, K, out);
}

mieb_status mieb_backend_lr_eval(struct mieb_backend *be, struct mieb_lr_set *s, int64_t n_active,
                                 const int64_t *which, const float *wt, float *lossv, float *grad)
{
    if (!mieb_backend_has_lr(be))
        return mieb_fail(MIEB_ERR_UNSUPPORTED, "%s backend: lr_eval", be->iface.name);
    return be->iface.lr_eval(be, s, n_active, which, wt, lossv, grad);
}

void mieb_backend_lr_close(struct mieb_backend *be, struct mieb_lr_set *s)
{
    if (s && be->iface.lr_close)
        be->iface.lr_close(be, s);
}

mieb_status mieb_backend_lr_predict(struct mieb_backend *be, const float *coef, const float *intercept,
                                    int64_t n_problems, int64_t KK, int64_t D, const float *X, int64_t n, int64_t *out)
{
    if (!mieb_backend_has_lr(be))
        return mieb_fail(MIEB_ERR_UNSUPPORTED, "%s backend: lr_predict", be->iface.name);
    return be->iface.lr_predict(be, coef, intercept, n_problems, KK, D, X, n, out);
}
