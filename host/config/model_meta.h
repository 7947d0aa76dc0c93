/**
 * model_meta.h - <embeddings>/model_meta.json: the model's identity and similarity
 * (FORMAT.md §2). Only name, revision and similarity_fn_name are interpreted; the file
 * is copied verbatim into the results folder.
 */
#ifndef MIEB_CONFIG_MODEL_META_H
#define MIEB_CONFIG_MODEL_META_H

#include "../backend/backend.h"
#include "../core/status.h"

struct mieb_model_meta {
    char path[4096];
    char name[512];       /* "org/model" */
    char revision[256];   /* may be empty */
    enum mieb_sim sim;    /* similarity_fn_name; null or absent means cosine */
};

mieb_status mieb_model_meta_load(const char *emb_dir, struct mieb_model_meta *out);

#endif
