/* model_meta.c - reads the fields of model_meta.json that scoring depends on. */
#include "model_meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../core/fileutil.h"
#include "../io/json_alloc.h"
#include "../io/results_reader.h" /* mieb_json_py_to_strict */

mieb_status mieb_model_meta_load(const char *emb_dir, struct mieb_model_meta *out)
{
    char *text = NULL;
    size_t len = 0;
    memset(out, 0, sizeof *out);
    MIEB_TRY(mieb_path_join(out->path, sizeof out->path, emb_dir, "model_meta.json"));
    MIEB_TRY(mieb_read_file(out->path, 16u << 20, &text, &len));
    /* mteb writes model_meta.json with Python's json module: NaN and Infinity (max_tokens of
       many models) are not JSON, so rewrite them first, as the results reader does */
    char *strict = NULL;
    size_t slen = 0;
    mieb_status cst = mieb_json_py_to_strict(text, len, &strict, &slen);
    free(text);
    if (cst != MIEB_OK)
        return cst;
    unsigned long jf = mieb_json_alloc_failures();
    cJSON *root = cJSON_ParseWithLength(strict, slen);
    free(strict);
    if (!cJSON_IsObject(root)) {
        bool parsed = root != NULL;
        cJSON_Delete(root);
        if (mieb_json_alloc_failures() != jf)
            return mieb_fail(MIEB_ERR_OOM, "%s: out of memory parsing it", out->path);
        return mieb_fail(MIEB_ERR_CONFIG, "%s: %s", out->path, parsed ? "not a JSON object" : MIEB_JSON_PARSE_FAILED);
    }
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
    const cJSON *rev = cJSON_GetObjectItemCaseSensitive(root, "revision");
    const cJSON *sim = cJSON_GetObjectItemCaseSensitive(root, "similarity_fn_name");
    mieb_status st = MIEB_OK;
    if (!cJSON_IsString(name) || !name->valuestring[0] || strlen(name->valuestring) >= sizeof out->name)
        st = mieb_fail(MIEB_ERR_CONFIG, "%s: \"name\" must be a non-empty string like \"org/model\"", out->path);
    else if (rev && !cJSON_IsNull(rev) && (!cJSON_IsString(rev) || strlen(rev->valuestring) >= sizeof out->revision))
        st = mieb_fail(MIEB_ERR_CONFIG, "%s: \"revision\" must be a string or null", out->path);
    else if (sim && !cJSON_IsNull(sim) && !cJSON_IsString(sim))
        st = mieb_fail(MIEB_ERR_CONFIG, "%s: \"similarity_fn_name\" must be a string or null", out->path);
    /* both name folders of the results path (<out>/results/<org>__<model>/<revision>/): a
       revision "../.." or "a/b" would write outside it */
    else if (!strcmp(name->valuestring, ".") || !strcmp(name->valuestring, ".."))
        st = mieb_fail(MIEB_ERR_CONFIG, "%s: \"name\" cannot be '%s'", out->path, name->valuestring);
    else if (cJSON_IsString(rev) && (strchr(rev->valuestring, '/') || !strcmp(rev->valuestring, ".") ||
                                     !strcmp(rev->valuestring, "..")))
        st = mieb_fail(MIEB_ERR_CONFIG, "%s: \"revision\" '%s' cannot name a folder (no '/', '.' or '..')",
                       out->path, rev->valuestring);
    if (st == MIEB_OK) {
        snprintf(out->name, sizeof out->name, "%s", name->valuestring);
        if (cJSON_IsString(rev))
            snprintf(out->revision, sizeof out->revision, "%s", rev->valuestring);
        st = mieb_sim_parse(cJSON_IsString(sim) ? sim->valuestring : NULL, &out->sim);
        if (st != MIEB_OK)
            mieb_fail_context(st, "%s", out->path);
    }
    cJSON_Delete(root);
    return st;
}
