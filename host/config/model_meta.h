/**
 * model_meta.h - <embeddings>/model_meta.json: the model's identity and similarity
 * (FORMAT.md §2). Only name, revision and similarity_fn_name are interpreted; the bytes
 * that were checked are the ones copied into the results folder, so what mteb reads there
 * is what was validated (the file read strictly: json/json_strict.h).
 */
#ifndef MIEB_CONFIG_MODEL_META_H
#define MIEB_CONFIG_MODEL_META_H

#include <stddef.h>

#include "../core/similarity.h"
#include "../core/status.h"

/* name and revision become folder names: <out>/results/<org>__<model>/<revision>/ */
#define MIEB_FOLDER_NAME_MAX 255

struct mieb_model_meta {
    char path[4096];
    char name[512];       /* "org/model" */
    char revision[256];   /* may be empty */
    enum mieb_sim sim;    /* similarity_fn_name; null or absent means cosine */
    char *text;           /* the file's bytes as checked (owned; mieb_model_meta_free) */
    size_t text_len;
};

mieb_status mieb_model_meta_load(const char *emb_dir, struct mieb_model_meta *out);

/** Free the bytes kept by mieb_model_meta_load (safe to call twice or after a failed load). */
void mieb_model_meta_free(struct mieb_model_meta *m);

#endif
