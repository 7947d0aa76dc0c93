/* manifest.c - the provenance of a run beside its results (see manifest.h). */
#include "manifest.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../dispatch/dispatch.h"
#include "../core/fileutil.h"
#include "../analysis/leaderboard.h"

#ifndef MIEB_GIT_COMMIT
#define MIEB_GIT_COMMIT "unknown"
#endif

#define EDGE (64 * 1024) /* bytes hashed at each end of an input file */

static void utc_now(char *buf, size_t n, int compact)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, compact ? "%Y%m%dT%H%M%SZ" : "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A kernel the backends describe (dispatch.h): the CPU's under cpu_kernels, the device's under
   <backend>_kernels. */
static void put_kernel(void *root, const char *backend, const char *key, const char *value)
{
    char name[64];
    snprintf(name, sizeof name, "%s_kernels", backend);
    cJSON *obj = cJSON_GetObjectItemCaseSensitive(root, name);
    if (!obj)
        obj = cJSON_AddObjectToObject(root, name);
    if (obj)
        cJSON_AddStringToObject(obj, key, value ? value : "");
}

mieb_status mieb_manifest_begin(struct mieb_manifest *m, int argc, char **argv, struct mieb_backend *be,
                                const char *precision, const char *model, const char *revision)
{
    char now[32], tool[128];
    *m = (struct mieb_manifest){0};
    m->root = cJSON_CreateObject();
    m->tasks = cJSON_CreateObject();
    cJSON *cmd = cJSON_CreateArray();
    if (!m->root || !m->tasks || !cmd) {
        cJSON_Delete(cmd);
        mieb_manifest_free(m);
        return mieb_fail(MIEB_ERR_OOM, "run manifest");
    }
    utc_now(m->stamp, sizeof m->stamp, 1);
    utc_now(now, sizeof now, 0);
    snprintf(tool, sizeof tool, "mieb-eval %s (%s)", MIEB_VERSION, MIEB_GIT_COMMIT);
    cJSON_AddStringToObject(m->root, "tool", tool);
    cJSON_AddStringToObject(m->root, "version", MIEB_VERSION);
    cJSON_AddStringToObject(m->root, "commit", MIEB_GIT_COMMIT);
    for (int i = 0; i < argc; i++)
        cJSON_AddItemToArray(cmd, cJSON_CreateString(argv[i]));
    cJSON_AddItemToObject(m->root, "command", cmd);
    cJSON_AddStringToObject(m->root, "device", be ? be->iface.name : "");
    cJSON_AddStringToObject(m->root, "precision", precision);
    mieb_dispatch_describe(be, put_kernel, m->root);
    cJSON_AddStringToObject(m->root, "model", model);
    cJSON_AddStringToObject(m->root, "revision", revision);
    cJSON_AddStringToObject(m->root, "started", now);
    cJSON_AddNumberToObject(m->root, "pid", (double)getpid());
    return MIEB_OK;
}

/* FNV-1a 64 of a file's first and last EDGE bytes (all of it when smaller). */
static int edge_hash(const char *path, off_t size, char out[17])
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    unsigned char *buf = malloc(EDGE);
    uint64_t h = 1469598103934665603ull;
    off_t starts[2] = {0, size > 2 * EDGE ? size - EDGE : EDGE};
    int ok = buf != NULL;
    for (int k = 0; ok && k < 2 && starts[k] < size; k++) {
        ssize_t got = pread(fd, buf, EDGE, starts[k]);
        if (got < 0) {
            ok = 0;
            break;
        }
        for (ssize_t i = 0; i < got; i++)
            h = (h ^ buf[i]) * 1099511628211ull;
    }
    free(buf);
    close(fd);
    if (!ok)
        return -1;
    snprintf(out, 17, "%016llx", (unsigned long long)h);
    return 0;
}

static void add_file(cJSON *list, const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return;
    char hash[17] = "", mtime[32];
    struct tm tm;
    gmtime_r(&sb.st_mtime, &tm);
    strftime(mtime, sizeof mtime, "%Y-%m-%dT%H:%M:%SZ", &tm);
    cJSON *f = cJSON_CreateObject();
    if (!f)
        return;
    cJSON_AddStringToObject(f, "path", path);
    cJSON_AddNumberToObject(f, "bytes", (double)sb.st_size);
    cJSON_AddStringToObject(f, "mtime", mtime);
    if (edge_hash(path, sb.st_size, hash) == 0)
        cJSON_AddStringToObject(f, "edges_fnv1a64", hash);
    cJSON_AddItemToArray(list, f);
}

/* Every regular file under dir (split / subset / role files), depth-first in name order. */
static void add_tree(cJSON *list, const char *dir, int depth)
{
    struct dirent **names = NULL;
    int n = depth > 4 ? -1 : scandir(dir, &names, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        char p[PATH_MAX];
        if (names[i]->d_name[0] != '.' && snprintf(p, sizeof p, "%s/%s", dir, names[i]->d_name) < (int)sizeof p) {
            struct stat sb;
            if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
                add_tree(list, p, depth + 1);
            else
                add_file(list, p);
        }
        free(names[i]);
    }
    free(names);
}

void mieb_manifest_task(struct mieb_manifest *m, const char *task, const char *task_data_file, const char *emb_dir)
{
    cJSON *list = m->tasks ? cJSON_CreateArray() : NULL; /* no manifest when begin failed */
    if (!list)
        return;
    if (task_data_file)
        add_file(list, task_data_file);
    if (emb_dir) {
        char p[PATH_MAX];
        if (snprintf(p, sizeof p, "%s/%s", emb_dir, task) < (int)sizeof p)
            add_tree(list, p, 0);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(m->tasks, task);
    cJSON_AddItemToObject(m->tasks, task, list);
}

mieb_status mieb_manifest_finish(struct mieb_manifest *m, cJSON *summary, const char *results_dir, char *path,
                                 size_t path_n)
{
    char now[32], dir[PATH_MAX];
    if (!m->root) {
        cJSON_Delete(summary);
        return mieb_fail(MIEB_ERR_OOM, "run manifest");
    }
    utc_now(now, sizeof now, 0);
    cJSON_AddStringToObject(m->root, "finished", now);
    if (summary)
        cJSON_AddItemToObject(m->root, "summary", summary);
    cJSON_AddItemToObject(m->root, "inputs", m->tasks);
    m->tasks = NULL;
    if (snprintf(dir, sizeof dir, "%s/.mieb-eval", results_dir) >= (int)sizeof dir ||
        snprintf(path, path_n, "%s/run-%s-%ld.json", dir, m->stamp, (long)getpid()) >= (int)path_n)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "%s: path too long for the run manifest", results_dir);
    if (mkdir(dir, 0777) != 0 && !mieb_dir_exists(dir))
        return mieb_fail(MIEB_ERR_IO, "%s: cannot create the run manifest's folder", dir);
    char *text = cJSON_Print(m->root);
    if (!text)
        return mieb_fail(MIEB_ERR_OOM, "run manifest");
    mieb_status st = mieb_write_file_atomic(path, text, strlen(text));
    free(text);
    return st;
}

void mieb_manifest_free(struct mieb_manifest *m)
{
    cJSON_Delete(m->root);
    cJSON_Delete(m->tasks);
    *m = (struct mieb_manifest){0};
}

static int newest_first(const struct dirent **a, const struct dirent **b)
{
    return -strcmp((*a)->d_name, (*b)->d_name); /* run-<UTC stamp>-<pid>.json sorts by time */
}

static int is_run_file(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return !strncmp(e->d_name, "run-", 4) && n > 9 && !strcmp(e->d_name + n - 5, ".json");
}

/*
 * The newest manifest of a revision folder: "tool" and "precision" (malloc'd, free them), or
 * MIEB_ERR_NOT_FOUND when the folder has none (results mteb wrote itself).
 */
static mieb_status mieb_manifest_latest(const char *revision_dir, char **tool, char **precision)
{
    char dir[PATH_MAX], p[PATH_MAX];
    struct dirent **names = NULL;
    *tool = *precision = NULL;
    snprintf(dir, sizeof dir, "%s/.mieb-eval", revision_dir);
    int n = scandir(dir, &names, is_run_file, newest_first);
    mieb_status st = MIEB_ERR_NOT_FOUND;
    for (int i = 0; i < n; i++) {
        if (st == MIEB_ERR_NOT_FOUND && snprintf(p, sizeof p, "%s/%s", dir, names[i]->d_name) < (int)sizeof p) {
            char *text = NULL;
            size_t len = 0;
            if (mieb_read_file(p, (size_t)1 << 24, &text, &len) == MIEB_OK) {
                cJSON *j = cJSON_ParseWithLength(text, len);
                const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "tool"),
                            *pr = cJSON_GetObjectItemCaseSensitive(j, "precision");
                if (cJSON_IsString(t) && cJSON_IsString(pr)) {
                    *tool = strdup(t->valuestring);
                    *precision = strdup(pr->valuestring);
                    st = *tool && *precision ? MIEB_OK : MIEB_ERR_OOM;
                }
                cJSON_Delete(j);
            }
            free(text);
            mieb_clear_error();
        }
        free(names[i]);
    }
    free(names);
    return st;
}

/* "<tool>, <precision>" of the newest manifest of a revision folder, or "" when it has none. */
static void mieb_manifest_produced_by(const char *revision_dir, char *buf, size_t n)
{
    char *tool = NULL, *precision = NULL;
    buf[0] = '\0';
    if (mieb_manifest_latest(revision_dir, &tool, &precision) == MIEB_OK)
        snprintf(buf, n, "%s, %s", tool, precision);
    free(tool);
    free(precision);
}

mieb_status mieb_manifest_produced_by_rows(const struct mieb_leaderboard *lb, char ***out)
{
    char **by = calloc((size_t)lb->n_models + 1, sizeof *by);
    for (int i = 0; by && i < lb->n_models; i++) {
        if (!(by[i] = malloc(512))) {
            mieb_manifest_produced_by_free(by, lb->n_models);
            by = NULL;
            break;
        }
        mieb_manifest_produced_by(lb->rows[i].model->dir, by[i], 512);
    }
    *out = by;
    return by ? MIEB_OK : mieb_fail(MIEB_ERR_OOM, "the results' provenance");
}

void mieb_manifest_produced_by_free(char **by, int n)
{
    for (int i = 0; by && i < n; i++)
        free(by[i]);
    free(by);
}
