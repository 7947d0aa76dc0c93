/* families.c - which driver scores which task family (one line per family). */
#include "family.h"

#include "../metrics/retrieval_metrics.h"
#include "clf_common.h"

mieb_family_score_fn mieb_family_driver(enum mieb_family family)
{
    switch (family) {
    case MIEB_FAMILY_RETRIEVAL: return mieb_retrieval_score_subset;
    case MIEB_FAMILY_COMPOSITIONALITY: return mieb_compositionality_score_subset;
    case MIEB_FAMILY_STS: return mieb_sts_score_subset;
    case MIEB_FAMILY_CLUSTERING: return mieb_clustering_score_subset;
    case MIEB_FAMILY_ZEROSHOT: return mieb_zeroshot_score_subset;
    case MIEB_FAMILY_CLASSIFICATION: return mieb_probe_score_subset;
    default: return NULL;
    }
}

double (*mieb_family_round_fn(enum mieb_family family))(const char *key, double x, int ndigits)
{
    switch (family) {
    case MIEB_FAMILY_RETRIEVAL: return mieb_ret_round_for_write; /* nAUC values are numpy.float64 */
    default: return NULL;
    }
}
