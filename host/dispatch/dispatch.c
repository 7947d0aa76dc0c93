/*
 * dispatch.c - device selection and the CPU fallback of the operations a backend may hand
 * back (dispatch.h): ask supports(), run, and take the CPU backend when the answer or the
 * run says the chosen backend cannot.
 */
#include "dispatch.h"

#include <stdlib.h>
#include <string.h>

#include "../cpu/cpu_backend.h"
#include "../cpu/cpu_kmeans.h"
#include "../cpu/cpu_logreg.h"
#include "../cpu/cpu_pairwise.h"
#ifdef MIEB_HAVE_CUDA
#include "cuda_init.h"
#endif

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

/*
 * Whether the CPU takes op over after supports() answered st: 1 yes, 0 no (run it on be),
 * -1 neither (st is the error). A backend without the slot gives way quietly; one over what
 * it can index or hold (MIEB_ERR_TOO_LARGE, here or from the run) with a warning:
 * "<why>; <cpu_what>". Any other error of the run is the caller's.
 */
static int cpu_takes_over(mieb_status st, const char *cpu_what)
{
    if (st == MIEB_OK)
        return 0;
    if (st == MIEB_ERR_UNSUPPORTED) {
        mieb_clear_error();
        return 1;
    }
    if (st == MIEB_ERR_TOO_LARGE) {
        MIEB_LOGW("%s; %s", mieb_last_error(), cpu_what);
        mieb_clear_error();
        return 1;
    }
    return -1;
}

/* The chosen backend's verdict on op before the call: as cpu_takes_over; be NULL is the CPU. */
static int ask(struct mieb_backend *be, const struct mieb_op_desc *op, const char *cpu_what, mieb_status *st)
{
    if (!be)
        return 1;
    *st = mieb_backend_supports(be, op);
    return cpu_takes_over(*st, cpu_what);
}

mieb_status mieb_dispatch_kmeans_assign(struct mieb_backend *be, const float *x, int64_t n, const float *c,
                                        const float *c_sqnorm, int64_t k, int64_t dim, int32_t *labels)
{
    static const char what[] = "assigning on the CPU";
    const struct mieb_op_desc op = {.op = MIEB_OP_KMEANS_ASSIGN, .n = n, .k = k, .dim = dim};
    mieb_status st = MIEB_OK;
    int cpu = ask(be, &op, what, &st);
    if (cpu < 0)
        return st;
    if (!cpu) {
        st = be->iface.kmeans_assign(be, x, n, c, c_sqnorm, k, dim, labels);
        if (st != MIEB_ERR_TOO_LARGE)
            return st;
        cpu_takes_over(st, what);
    }
    return mieb_cpu_kmeans_assign(NULL, x, n, c, c_sqnorm, k, dim, labels);
}

mieb_status mieb_dispatch_sts_pairs(struct mieb_backend *be, const float *a, const float *b, int64_t n, int64_t dim,
                                    bool sklearn_f64, enum mieb_sim model_sim, const struct mieb_sts_pair_out *out)
{
    static const char what[] = "scoring the pairs on the CPU";
    const struct mieb_op_desc op = {.op = MIEB_OP_STS_PAIRS, .n = n, .dim = dim};
    mieb_status st = MIEB_OK;
    int cpu = ask(be, &op, what, &st);
    if (cpu < 0)
        return st;
    if (!cpu) {
        st = be->iface.sts_pairs(be, a, b, n, dim, sklearn_f64, model_sim, out);
        if (st != MIEB_ERR_TOO_LARGE)
            return st;
        cpu_takes_over(st, what);
    }
    return mieb_cpu_sts_pairs(a, b, n, dim, sklearn_f64, model_sim, out);
}

mieb_status mieb_dispatch_compo_scores(struct mieb_backend *be, const float *img, enum mieb_emb_dtype img_dtype,
                                       const float *txt, enum mieb_emb_dtype txt_dtype, int64_t n_samples,
                                       int64_t n_img, int64_t n_txt, int64_t dim, float *scores)
{
    static const char what[] = "scoring the samples on the CPU";
    const struct mieb_op_desc op = {.op = MIEB_OP_COMPO_SCORES, .n = n_samples, .k = n_img, .m = n_txt, .dim = dim};
    mieb_status st = MIEB_OK;
    int cpu = ask(be, &op, what, &st);
    if (cpu < 0)
        return st;
    if (!cpu) {
        st = be->iface.compo_scores(be, img, img_dtype, txt, txt_dtype, n_samples, n_img, n_txt, dim, scores);
        if (st != MIEB_ERR_TOO_LARGE)
            return st;
        cpu_takes_over(st, what);
    }
    return mieb_cpu_compo_scores(img, img_dtype, txt, txt_dtype, n_samples, n_img, n_txt, dim, scores);
}

mieb_status mieb_dispatch_lr_predict(struct mieb_backend *be, const float *coef, const float *intercept,
                                     int64_t n_problems, int64_t KK, int64_t D, const float *X, int64_t n,
                                     int64_t *out)
{
    static const char what[] = "predicting on the CPU";
    const struct mieb_op_desc op = {.op = MIEB_OP_LR_PREDICT, .n = n, .k = KK, .m = n_problems, .dim = D};
    mieb_status st = MIEB_OK;
    int cpu = ask(be, &op, what, &st);
    if (cpu < 0)
        return st;
    if (!cpu) {
        st = be->iface.lr_predict(be, coef, intercept, n_problems, KK, D, X, n, out);
        if (st != MIEB_ERR_TOO_LARGE)
            return st;
        cpu_takes_over(st, what);
    }
    return mieb_cpu_lr_predict(coef, intercept, n_problems, KK, D, X, n, be ? be->opts.n_threads : 0, out);
}

bool mieb_dispatch_lr_batch_available(struct mieb_backend *be, int64_t n_problems, int64_t n, int64_t D, int64_t K)
{
    if (!be)
        return false;
    const struct mieb_op_desc op = {.op = MIEB_OP_LR_BATCH, .n = n, .k = K, .m = n_problems, .dim = D};
    mieb_status st = mieb_backend_supports(be, &op);
    if (cpu_takes_over(st, "fitting each problem on its own on the CPU") < 0) {
        MIEB_LOGW("%s; fitting each problem on its own on the CPU", mieb_last_error());
        mieb_clear_error();
    }
    return st == MIEB_OK;
}

/* The describe slots' put, with the backend's name added. */
struct named_put {
    mieb_dispatch_describe_fn put;
    void *user;
    const char *backend;
};

static void put_named(void *user, const char *key, const char *value)
{
    const struct named_put *np = user;
    np->put(np->user, np->backend, key, value);
}

void mieb_dispatch_describe(struct mieb_backend *be, mieb_dispatch_describe_fn put, void *user)
{
    struct named_put cpu = {put, user, "cpu"};
    mieb_cpu_describe(put_named, &cpu);
    if (be && strcmp(be->iface.name, "cpu") && be->iface.describe) {
        struct named_put own = {put, user, be->iface.name};
        be->iface.describe(be, put_named, &own);
    }
}
