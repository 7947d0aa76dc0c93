/* similarity.c - similarity_fn_name parsed and named (see similarity.h). */
#include "similarity.h"

#include <string.h>

mieb_status mieb_sim_parse(const char *name, enum mieb_sim *out)
{
    if (!name || !*name || !strcmp(name, "cosine") || !strcmp(name, "cos_sim"))
        *out = MIEB_SIM_COSINE;
    else if (!strcmp(name, "dot") || !strcmp(name, "dot_score"))
        *out = MIEB_SIM_DOT;
    else if (!strcmp(name, "MaxSim") || !strcmp(name, "max_sim") || !strcmp(name, "maxsim"))
        *out = MIEB_SIM_MAXSIM;
    else
        return mieb_fail(MIEB_ERR_CONFIG, "unknown similarity_fn_name '%s' (expected cosine, dot or MaxSim)", name);
    return MIEB_OK;
}

const char *mieb_sim_name(enum mieb_sim sim)
{
    switch (sim) {
    case MIEB_SIM_COSINE: return "cosine";
    case MIEB_SIM_DOT: return "dot";
    case MIEB_SIM_MAXSIM: return "MaxSim";
    }
    return "?";
}
