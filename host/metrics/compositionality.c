/* compositionality.c - argmax-correctness counts and float32 accuracies (see the header). */
#include "compositionality.h"

#include <math.h>

/* torch.argmax of n values at stride `stride`: first maximum, NaN beats everything. */
static int64_t mieb_torch_argmax(const float *v, int64_t n, int64_t stride)
{
    int64_t best = 0;
    float m = v[0];
    if (isnan(m))
        return 0;
    for (int64_t k = 1; k < n; k++) {
        float x = v[k * stride];
        if (isnan(x))
            return k;
        if (x > m) {
            m = x;
            best = k;
        }
    }
    return best;
}

void mieb_compo_add_sample(struct mieb_compo_counts *c, const float *s, int64_t n_img, int64_t n_txt)
{
    bool text_ok = true, image_ok = true;
    /* image i's closest text (argmax over row i) must be text i */
    for (int64_t i = 0; i < n_img && text_ok; i++)
        text_ok = mieb_torch_argmax(s + i * n_txt, n_txt, 1) == i;
    /* text j's closest image (argmax over column j) must be image j */
    for (int64_t j = 0; j < n_txt && image_ok; j++)
        image_ok = mieb_torch_argmax(s + j, n_img, n_txt) == j;
    c->n++;
    c->text_ok += text_ok;
    c->image_ok += image_ok;
    c->all_ok += text_ok && image_ok;
}

double mieb_compo_mean(int64_t k, int64_t n)
{
    if (n <= 0)
        return NAN;
    /* torch sums the 0/1 float32 values exactly (n < 2^24) and divides by n in float32 */
    volatile float q = (float)k / (float)n;
    return (double)q;
}

mieb_status mieb_compo_finish(const struct mieb_compo_counts *c, cJSON *scores)
{
    if (!cJSON_AddNumberToObject(scores, "image_acc", mieb_compo_mean(c->image_ok, c->n)) ||
        !cJSON_AddNumberToObject(scores, "text_acc", mieb_compo_mean(c->text_ok, c->n)) ||
        !cJSON_AddNumberToObject(scores, "accuracy", mieb_compo_mean(c->all_ok, c->n)))
        return mieb_fail(MIEB_ERR_OOM, "compositionality scores");
    return MIEB_OK;
}
