/* clf_common.c - argmax and metric-dict JSON shared by zeroshot.c and probe.c. */
#include "clf_common.h"

#include <math.h>

int64_t mieb_clf_argmax_f32(const float *row, int64_t k)
{
    int64_t best = 0;
    if (isnan(row[0]))
        return 0;
    for (int64_t j = 1; j < k; j++) {
        if (isnan(row[j]))
            return j;
        if (row[j] > row[best])
            best = j;
    }
    return best;
}

mieb_status mieb_clf_scores_to_json(const struct mieb_clf_scores *s, cJSON *obj)
{
    for (int i = 0; i < 9; i++) {
        cJSON *v = (i < 7 || s->has_ap) ? cJSON_CreateNumber(mieb_clf_scores_value(s, i)) : cJSON_CreateNull();
        if (!v || !cJSON_AddItemToObject(obj, mieb_clf_keys[i], v)) {
            cJSON_Delete(v);
            return mieb_fail(MIEB_ERR_OOM, "classification scores JSON");
        }
    }
    return MIEB_OK;
}
