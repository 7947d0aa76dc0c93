/* model_meta.c - reads the fields of model_meta.json that scoring depends on. */
#include "model_meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../core/escape.h"
#include "../core/fileutil.h"
#include "../json/json_strict.h"

#define MODEL_META_MAX_BYTES (16u << 20)

/* Bytes of the results folder named after `name`: each '/' becomes "__" (results_writer.c). */
static size_t folder_len(const char *name)
{
    size_t n = 0;
    for (const char *p = name; *p; p++)
        n += *p == '/' ? 2 : 1;
    return n;
}

/* "name": a non-empty string whose folder name fits; not "." or "..". */
static mieb_status check_name(const char *path, const cJSON *name)
{
    if (!cJSON_IsString(name) || !name->valuestring[0])
        return mieb_fail(MIEB_ERR_CONFIG, "%s: \"name\" must be a non-empty string like \"org/model\"", path);
    size_t len = strlen(name->valuestring), fl = folder_len(name->valuestring);
    if (fl > MIEB_FOLDER_NAME_MAX)
        return mieb_fail(MIEB_ERR_CONFIG,
                         "%s: \"name\" is %zu bytes long; its results folder name (each '/' as \"__\") would be "
                         "%zu bytes, more than the %d a folder name may have",
                         path, len, fl, MIEB_FOLDER_NAME_MAX);
    if (!strcmp(name->valuestring, ".") || !strcmp(name->valuestring, ".."))
        return mieb_fail(MIEB_ERR_CONFIG, "%s: \"name\" cannot be '%s'", path, name->valuestring);
    if (mieb_has_control(name->valuestring)) /* it names the results folder */
        return mieb_fail(MIEB_ERR_CONFIG, "%s: \"name\" '%s' holds a control character (shown escaped)", path,
                         name->valuestring);
    return MIEB_OK;
}

/* "revision": absent, null, or a string that can name one folder (a revision "../.." or
   "a/b" would write outside <out>/results/<org>__<model>/). */
static mieb_status check_revision(const char *path, const cJSON *rev)
{
    if (!rev || cJSON_IsNull(rev))
        return MIEB_OK;
    if (!cJSON_IsString(rev))
        return mieb_fail(MIEB_ERR_CONFIG, "%s: \"revision\" must be a string or null", path);
    size_t len = strlen(rev->valuestring);
    if (len > MIEB_FOLDER_NAME_MAX)
        return mieb_fail(MIEB_ERR_CONFIG,
                         "%s: \"revision\" is %zu bytes long, more than the %d a folder name may have", path, len,
                         MIEB_FOLDER_NAME_MAX);
    if (strchr(rev->valuestring, '/') || !strcmp(rev->valuestring, ".") || !strcmp(rev->valuestring, ".."))
        return mieb_fail(MIEB_ERR_CONFIG, "%s: \"revision\" '%s' cannot name a folder (no '/', '.' or '..')", path,
                         rev->valuestring);
    if (mieb_has_control(rev->valuestring))
        return mieb_fail(MIEB_ERR_CONFIG, "%s: \"revision\" '%s' holds a control character (shown escaped)", path,
                         rev->valuestring);
    return MIEB_OK;
}

static mieb_status read_fields(const cJSON *root, struct mieb_model_meta *out)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
    const cJSON *rev = cJSON_GetObjectItemCaseSensitive(root, "revision");
    const cJSON *sim = cJSON_GetObjectItemCaseSensitive(root, "similarity_fn_name");
    if (!cJSON_IsObject(root))
        return mieb_fail(MIEB_ERR_CONFIG, "%s: not a JSON object", out->path);
    MIEB_TRY(check_name(out->path, name));
    MIEB_TRY(check_revision(out->path, rev));
    if (sim && !cJSON_IsNull(sim) && !cJSON_IsString(sim))
        return mieb_fail(MIEB_ERR_CONFIG, "%s: \"similarity_fn_name\" must be a string or null", out->path);
    snprintf(out->name, sizeof out->name, "%s", name->valuestring);
    if (cJSON_IsString(rev))
        snprintf(out->revision, sizeof out->revision, "%s", rev->valuestring);
    mieb_status st = mieb_sim_parse(cJSON_IsString(sim) ? sim->valuestring : NULL, &out->sim);
    return st == MIEB_OK ? MIEB_OK : mieb_fail_context(st, "%s", out->path);
}

mieb_status mieb_model_meta_load(const char *emb_dir, struct mieb_model_meta *out)
{
    struct mieb_json_file jf;
    memset(out, 0, sizeof *out);
    MIEB_TRY(mieb_path_join(out->path, sizeof out->path, emb_dir, "model_meta.json"));
    /* mteb writes it with Python's json module (NaN and Infinity for max_tokens of many
       models); it is read as Python reads it, so mteb later finds the same name and revision */
    MIEB_TRY(mieb_json_read_strict(out->path, MODEL_META_MAX_BYTES, MIEB_ERR_CONFIG, &jf));
    mieb_status st = read_fields(jf.root, out);
    if (st == MIEB_OK) { /* keep the checked bytes: they, not a second read, are copied */
        out->text = jf.text;
        out->text_len = jf.len;
        jf.text = NULL;
    }
    mieb_json_file_free(&jf);
    return st;
}

void mieb_model_meta_free(struct mieb_model_meta *m)
{
    free(m->text);
    m->text = NULL;
    m->text_len = 0;
}
