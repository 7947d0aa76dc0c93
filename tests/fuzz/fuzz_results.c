/*
 * fuzz_results.c - result files as `mieb-eval summary` reads them (host/results/results_reader.h):
 * the Python-json rewrite, one TaskResult file, and a scan of the revision folder holding it
 * (the input is also written as that folder's model_meta.json when it starts with '{"name"').
 */
#include "fuzz_common.h"

#include "results/results_reader.h"
#include "json/json_py.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char root[600], rev[700], path[800], meta[800];
    char *strict = NULL;
    size_t strict_len = 0;
    if (mieb_json_py_to_strict((const char *)data, size, &strict, &strict_len) == MIEB_OK)
        free(strict);

    snprintf(root, sizeof root, "%s/res", fuzz_tmpdir());
    snprintf(rev, sizeof rev, "%s/results/org__model/rev1", root);
    fuzz_mkdirs(rev);
    snprintf(path, sizeof path, "%s/SomeTask.json", rev);
    snprintf(meta, sizeof meta, "%s/model_meta.json", rev);
    fuzz_write(path, data, size);
    if (size >= 8 && memcmp(data, "{\"name\"", 7) == 0)
        fuzz_write(meta, data, size);
    else
        unlink(meta);

    struct mieb_task_result tr;
    if (mieb_task_result_read(path, &tr) == MIEB_OK)
        mieb_task_result_free(&tr);

    const char *dirs[1] = {root};
    struct mieb_model_results *m = NULL;
    int n = 0, n_bad = 0;
    if (mieb_results_scan(dirs, 1, &m, &n, &n_bad) == MIEB_OK)
        mieb_model_results_free(m, n);
    return 0;
}
