/* results_check.c - a result file that counts as present (results_check.h). */
#include "results_check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "../core/fileutil.h"
#include "../json/json_alloc.h"
#include "../json/json_py.h"

/* A result is a few MiB at most; summary reads up to 256 MiB, and a resumed run refuses the
   same files it would. */
#define RESULT_CHECK_MAX_BYTES (256u << 20)

/* The text of path as strict JSON (NaN -> null), parsed. */
static mieb_status parse_result(const char *path, cJSON **root)
{
    char *text = NULL, *strict = NULL;
    size_t len = 0, slen = 0;
    *root = NULL;
    MIEB_TRY(mieb_read_file(path, RESULT_CHECK_MAX_BYTES, &text, &len));
    if (len == 0) { /* what a crash between create and write, or a full disk, leaves */
        free(text);
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: an empty file", path);
    }
    mieb_status st = mieb_json_py_to_strict(text, len, &strict, &slen);
    free(text);
    if (st != MIEB_OK)
        return st;
    unsigned long jf = mieb_json_alloc_failures();
    *root = cJSON_ParseWithLength(strict, slen);
    free(strict);
    /* out of memory is no verdict on the file: it must not be set aside for that */
    if (!*root)
        return mieb_json_alloc_failures() != jf ? mieb_fail(MIEB_ERR_OOM, "%s: out of memory parsing it", path)
                                                : mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s", path, MIEB_JSON_PARSE_FAILED);
    return MIEB_OK;
}

/* scores[split] holds an entry of hf_subset `subset` with a main_score. */
static bool has_subset(const cJSON *list, const char *subset)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, list)
    {
        const cJSON *hs = cJSON_GetObjectItemCaseSensitive(e, "hf_subset");
        if (cJSON_IsObject(e) && cJSON_IsString(hs) && !strcmp(hs->valuestring, subset) &&
            cJSON_HasObjectItem(e, "main_score"))
            return true;
    }
    return false;
}

static mieb_status check_root(const char *path, const cJSON *root, const char *task_name,
                              const char *const *splits, int n_splits, const char *const *subsets, int n_subsets)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "task_name");
    const cJSON *scores = cJSON_GetObjectItemCaseSensitive(root, "scores");
    if (!cJSON_IsObject(root))
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: not a JSON object", path);
    if (!cJSON_IsString(name) || strcmp(name->valuestring, task_name))
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: task_name is %s%s%s, not %s", path, cJSON_IsString(name) ? "'" : "",
                         cJSON_IsString(name) ? name->valuestring : "missing", cJSON_IsString(name) ? "'" : "",
                         task_name);
    if (!cJSON_IsObject(scores))
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: no \"scores\" object", path);
    for (int s = 0; s < n_splits; s++) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(scores, splits[s]);
        if (!cJSON_IsArray(list))
            return mieb_fail(MIEB_ERR_BAD_DATA, "%s: no scores for split %s", path, splits[s]);
        for (int h = 0; h < n_subsets; h++)
            if (!has_subset(list, subsets[h]))
                return mieb_fail(MIEB_ERR_BAD_DATA, "%s: no scores for split %s, subset %s", path, splits[s],
                                 subsets[h]);
    }
    return MIEB_OK;
}

mieb_status mieb_result_check(const char *path, const char *task_name, const char *const *splits, int n_splits,
                              const char *const *subsets, int n_subsets)
{
    struct stat sb;
    if (lstat(path, &sb) != 0 && errno == ENOENT)
        return mieb_fail(MIEB_ERR_NOT_FOUND, "%s: no result yet", path);
    cJSON *root = NULL;
    mieb_status st = parse_result(path, &root);
    if (st == MIEB_OK)
        st = check_root(path, root, task_name, splits, n_splits, subsets, n_subsets);
    cJSON_Delete(root);
    return st;
}
