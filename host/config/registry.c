/* registry.c - the registry as the commands load it: the task list of configs/tasks.json and
   the benchmarks.json beside it (see registry.h). */
#include "registry.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/env.h"
#include "../core/fileutil.h"

/* benchmarks.json beside the tasks file, when there is one (optional: a bare tasks.json loads). */
static mieb_status load_sibling_benchmarks(const char *tasks_path, struct mieb_registry *r)
{
    char dir[PATH_MAX], bpath[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s", tasks_path);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[1] = '\0';
    else
        dir[0] = '\0';
    snprintf(bpath, sizeof bpath, "%sbenchmarks.json", dir);
    if (!mieb_file_exists(bpath))
        return MIEB_OK;
    mieb_status st = mieb_registry_load_benchmarks(r, bpath);
    if (st != MIEB_OK)
        mieb_registry_free(r);
    return st;
}

mieb_status mieb_registry_load(const char *path, struct mieb_registry *out)
{
    MIEB_TRY(mieb_task_list_load(path, out));
    return load_sibling_benchmarks(path, out);
}

mieb_status mieb_registry_load_default(struct mieb_registry *out)
{
    const char *env = mieb_env(MIEB_ENV_REGISTRY);
    char exe[PATH_MAX], cand[PATH_MAX + 64];
    if (env && *env)
        return mieb_registry_load(env, out);
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            /* installed layout (<prefix>/bin/../share/mieb-eval) and build-tree layouts */
            const char *rel[] = {"/../share/mieb-eval/tasks.json", "/../configs/tasks.json",
                                 "/configs/tasks.json"};
            for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
                snprintf(cand, sizeof cand, "%s%s", exe, rel[i]);
                if (access(cand, R_OK) == 0)
                    return mieb_registry_load(cand, out);
            }
        }
    }
    return mieb_registry_load(MIEB_SOURCE_DIR "/configs/tasks.json", out);
}

void mieb_registry_free(struct mieb_registry *r)
{
    if (r->tasks)
        mieb_registry_free_benchmarks(r);
    mieb_task_list_free(r);
    memset(r, 0, sizeof *r);
}
