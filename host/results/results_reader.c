/* results_reader.c - reads mteb result folders (TaskResult JSON with NaN literals) for `summary`. */
#include "results_reader.h"

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../core/fileutil.h"
#include "../json/json_alloc.h"
#include "../json/json_py.h"
#include "../core/qsort_cmp.h"

#define RESULT_MAX_BYTES (256u << 20)
#define SCAN_DEPTH 4

void mieb_task_result_free(struct mieb_task_result *tr)
{
    if (!tr)
        return;
    for (int i = 0; i < tr->n_entries; i++) {
        free(tr->entries[i].split);
        free(tr->entries[i].subset);
    }
    free(tr->entries);
    free(tr->task_name);
    free(tr->path);
    memset(tr, 0, sizeof *tr);
}

static cJSON *parse_py_json(const char *path, mieb_status *st)
{
    char *text = NULL, *strict = NULL;
    size_t len = 0, slen = 0;
    cJSON *root = NULL;
    *st = mieb_read_file(path, RESULT_MAX_BYTES, &text, &len);
    if (*st != MIEB_OK)
        return NULL;
    *st = mieb_json_py_to_strict(text, len, &strict, &slen);
    free(text);
    if (*st != MIEB_OK)
        return NULL;
    unsigned long jf = mieb_json_alloc_failures();
    root = cJSON_ParseWithLength(strict, slen);
    free(strict);
    if (!root)
        *st = mieb_json_alloc_failures() != jf ? mieb_fail(MIEB_ERR_OOM, "%s: out of memory parsing it", path)
                                               : mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s", path, MIEB_JSON_PARSE_FAILED);
    return root;
}

static char *stem_of(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char *s = strdup(base);
    char *dot = s ? strrchr(s, '.') : NULL;
    if (dot)
        *dot = '\0';
    return s;
}

mieb_status mieb_task_result_read(const char *path, struct mieb_task_result *out)
{
    mieb_status st;
    memset(out, 0, sizeof *out);
    cJSON *root = parse_py_json(path, &st);
    if (!root)
        return st;
    const cJSON *scores = cJSON_GetObjectItemCaseSensitive(root, "scores");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "task_name");
    if (!cJSON_IsObject(root) || !cJSON_IsObject(scores)) {
        cJSON_Delete(root);
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: not an mteb TaskResult (no \"scores\" object)", path);
    }
    int cap = 0;
    const cJSON *split;
    cJSON_ArrayForEach(split, scores) cap += cJSON_IsArray(split) ? cJSON_GetArraySize(split) : 0;
    out->path = strdup(path);
    out->task_name = cJSON_IsString(name) ? strdup(name->valuestring) : stem_of(path);
    out->entries = calloc((size_t)(cap > 0 ? cap : 1), sizeof *out->entries);
    if (!out->path || !out->task_name || !out->entries) {
        cJSON_Delete(root);
        mieb_task_result_free(out);
        return mieb_fail(MIEB_ERR_OOM, "%s", path);
    }
    st = MIEB_OK;
    cJSON_ArrayForEach(split, scores)
    {
        if (!cJSON_IsArray(split)) {
            st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: scores[\"%s\"] is not a list", path, split->string);
            break;
        }
        const cJSON *e;
        cJSON_ArrayForEach(e, split)
        {
            const cJSON *sub = cJSON_GetObjectItemCaseSensitive(e, "hf_subset");
            const cJSON *ms = cJSON_GetObjectItemCaseSensitive(e, "main_score");
            if (!cJSON_IsString(sub)) {
                st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: scores[\"%s\"][%d] has no hf_subset", path, split->string,
                               out->n_entries);
                break;
            }
            struct mieb_result_entry *re = &out->entries[out->n_entries++];
            re->split = strdup(split->string);
            re->subset = strdup(sub->valuestring);
            re->main_score = cJSON_IsNumber(ms) ? ms->valuedouble : NAN;
            if (!re->split || !re->subset) {
                st = mieb_fail(MIEB_ERR_OOM, "%s", path);
                break;
            }
        }
        if (st != MIEB_OK)
            break;
    }
    cJSON_Delete(root);
    if (st != MIEB_OK)
        mieb_task_result_free(out);
    return st;
}

/* ---- folder scan ---- */

struct scan_state {
    struct mieb_model_results *m;
    int n, cap;
    int n_bad;
    mieb_results_keep_fn keep; /* NULL: every task file */
    void *keep_user;
};

/* Whether the scan reads this task file (its name less ".json"). */
static bool wanted(const struct scan_state *s, const char *file)
{
    char task[NAME_MAX + 1];
    size_t l = strlen(file);
    if (!s->keep || l - 5 > NAME_MAX)
        return true;
    memcpy(task, file, l - 5);
    task[l - 5] = '\0';
    return s->keep(s->keep_user, task);
}

static bool is_task_json(const char *name)
{
    size_t l = strlen(name);
    return l > 5 && !strcmp(name + l - 5, ".json") && strcmp(name, "model_meta.json") != 0 && name[0] != '.';
}

static char *meta_string(const char *dir, const char *key)
{
    char path[PATH_MAX];
    mieb_status st;
    if (mieb_path_join(path, sizeof path, dir, "model_meta.json") != MIEB_OK || !mieb_file_exists(path))
        return NULL;
    cJSON *root = parse_py_json(path, &st);
    const cJSON *v = root ? cJSON_GetObjectItemCaseSensitive(root, key) : NULL;
    char *s = cJSON_IsString(v) ? strdup(v->valuestring) : NULL;
    cJSON_Delete(root);
    return s;
}

/* Model name from the folder <org>__<model> ("__" -> "/"), as mteb's cache names it. */
static char *name_from_folder(const char *revdir)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", revdir);
    char *slash = strrchr(buf, '/');
    if (!slash)
        return strdup("unknown");
    *slash = '\0';
    char *base = strrchr(buf, '/');
    base = base ? base + 1 : buf;
    char *sep = strstr(base, "__");
    if (sep) {
        memmove(sep + 1, sep + 2, strlen(sep + 2) + 1);
        *sep = '/';
    }
    return strdup(base);
}

static mieb_status read_revision(struct scan_state *s, const char *dir, char **files, int nf)
{
    if (s->n == s->cap) {
        int nc = s->cap ? 2 * s->cap : 8;
        void *p = realloc(s->m, (size_t)nc * sizeof *s->m);
        if (!p)
            return mieb_fail(MIEB_ERR_OOM, "result folders");
        s->m = p;
        s->cap = nc;
    }
    struct mieb_model_results *m = &s->m[s->n++];
    memset(m, 0, sizeof *m);
    const char *slash = strrchr(dir, '/');
    m->dir = strdup(dir);
    m->name = meta_string(dir, "name");
    if (!m->name)
        m->name = name_from_folder(dir);
    m->revision = meta_string(dir, "revision");
    if (!m->revision)
        m->revision = strdup(slash ? slash + 1 : dir);
    m->tasks = calloc((size_t)nf, sizeof *m->tasks);
    if (!m->dir || !m->name || !m->revision || !m->tasks)
        return mieb_fail(MIEB_ERR_OOM, "result folders");
    qsort(files, (size_t)nf, sizeof *files, mieb_cmp_str_ptr);
    for (int i = 0; i < nf; i++) {
        char path[PATH_MAX];
        if (!wanted(s, files[i]))
            continue;
        mieb_status st = mieb_path_join(path, sizeof path, dir, files[i]);
        if (st == MIEB_OK)
            st = mieb_task_result_read(path, &m->tasks[m->n_tasks]);
        if (st == MIEB_OK) {
            m->n_tasks++;
        } else if (st == MIEB_ERR_OOM) {
            return st;
        } else {
            MIEB_LOGE("%s", mieb_last_error());
            s->n_bad++;
        }
    }
    return MIEB_OK;
}

static mieb_status scan_dir(struct scan_state *s, const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d)
        return depth == 0 ? mieb_fail(MIEB_ERR_NOT_FOUND, "%s: no such result folder", dir) : MIEB_OK;
    char **files = NULL, **subs = NULL;
    int nf = 0, ns = 0, capf = 0, caps = 0;
    mieb_status st = MIEB_OK;
    struct dirent *de;
    while (st == MIEB_OK && (de = readdir(d))) {
        char path[PATH_MAX];
        if (de->d_name[0] == '.')
            continue;
        if (mieb_path_join(path, sizeof path, dir, de->d_name) != MIEB_OK)
            continue;
        bool isdir = mieb_dir_exists(path);
        char ***list = isdir ? &subs : &files;
        int *cnt = isdir ? &ns : &nf, *cap = isdir ? &caps : &capf;
        if (!isdir && !is_task_json(de->d_name))
            continue;
        if (*cnt == *cap) {
            int nc = *cap ? 2 * *cap : 16;
            void *p = realloc(*list, (size_t)nc * sizeof **list);
            if (!p) {
                st = mieb_fail(MIEB_ERR_OOM, "scan %s", dir);
                break;
            }
            *list = p;
            *cap = nc;
        }
        (*list)[*cnt] = strdup(de->d_name);
        if (!(*list)[*cnt])
            st = mieb_fail(MIEB_ERR_OOM, "scan %s", dir);
        else
            (*cnt)++;
    }
    closedir(d);
    /* A revision folder holds task results; model_meta.json marks it (mteb writes one). A
       folder with loose *.json files (a summary.json, say) and sub-folders but no
       model_meta.json is a folder of models: descend instead of taking the loose files. */
    char meta[PATH_MAX];
    bool has_meta = mieb_path_join(meta, sizeof meta, dir, "model_meta.json") == MIEB_OK && mieb_file_exists(meta);
    if (st == MIEB_OK && nf > 0 && (has_meta || ns == 0)) {
        st = read_revision(s, dir, files, nf);
    } else if (st == MIEB_OK && depth < SCAN_DEPTH) {
        if (ns > 1) /* qsort with a NULL array is undefined even for 0 items */
            qsort(subs, (size_t)ns, sizeof *subs, mieb_cmp_str_ptr);
        for (int i = 0; i < ns && st == MIEB_OK; i++) {
            char path[PATH_MAX];
            if (mieb_path_join(path, sizeof path, dir, subs[i]) == MIEB_OK)
                st = scan_dir(s, path, depth + 1);
        }
    }
    for (int i = 0; i < nf; i++)
        free(files[i]);
    for (int i = 0; i < ns; i++)
        free(subs[i]);
    free(files);
    free(subs);
    return st;
}

static int cmp_models(const void *a, const void *b)
{
    const struct mieb_model_results *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (!c)
        c = strcmp(x->revision, y->revision);
    return c ? c : strcmp(x->dir, y->dir);
}

void mieb_model_results_free(struct mieb_model_results *m, int n)
{
    if (!m)
        return;
    for (int i = 0; i < n; i++) {
        for (int t = 0; t < m[i].n_tasks; t++)
            mieb_task_result_free(&m[i].tasks[t]);
        free(m[i].tasks);
        free(m[i].name);
        free(m[i].revision);
        free(m[i].dir);
    }
    free(m);
}

mieb_status mieb_results_scan(const char *const *dirs, int n_dirs, struct mieb_model_results **out, int *n_out,
                              int *n_bad)
{
    return mieb_results_scan_only(dirs, n_dirs, NULL, NULL, out, n_out, n_bad);
}

mieb_status mieb_results_scan_only(const char *const *dirs, int n_dirs, mieb_results_keep_fn keep, void *user,
                                   struct mieb_model_results **out, int *n_out, int *n_bad)
{
    struct scan_state s = {.keep = keep, .keep_user = user};
    mieb_status st = MIEB_OK;
    for (int i = 0; i < n_dirs && st == MIEB_OK; i++)
        st = scan_dir(&s, dirs[i], 0);
    if (st != MIEB_OK) {
        mieb_model_results_free(s.m, s.n);
        return st;
    }
    if (s.n > 1)
        qsort(s.m, (size_t)s.n, sizeof *s.m, cmp_models);
    *out = s.m;
    *n_out = s.n;
    *n_bad = s.n_bad;
    return MIEB_OK;
}
