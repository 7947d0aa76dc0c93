/**
 * similarity.h - the model's similarity function (model_meta.json's similarity_fn_name), shared
 * by the configuration that reads it and the backends that compute it, so neither layer has to
 * include the other.
 */
#ifndef MIEB_CORE_SIMILARITY_H
#define MIEB_CORE_SIMILARITY_H

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Similarity between a query item and a corpus item. */
enum mieb_sim {
    MIEB_SIM_COSINE = 0, /**< dot of L2-normalised rows; callers pass rows already normalised */
    MIEB_SIM_DOT = 1,    /**< plain dot product */
    MIEB_SIM_MAXSIM = 2, /**< ColBERT late interaction: sum over query tokens of the max dot over doc tokens */
};

/** Parse "cosine" / "dot" / "MaxSim" (mteb's similarity_fn_name; NULL or "" means cosine). */
mieb_status mieb_sim_parse(const char *name, enum mieb_sim *out);
const char *mieb_sim_name(enum mieb_sim sim);

#ifdef __cplusplus
}
#endif

#endif
