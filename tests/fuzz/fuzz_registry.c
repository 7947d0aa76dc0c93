/*
 * fuzz_registry.c - the task registry (configs/tasks.json format) and, when the input holds
 * the separator line "\n#benchmarks#\n", a benchmarks.json beside it, through
 * mieb_registry_load; an accepted registry is then queried as the commands query it.
 */
#include "fuzz_common.h"

#include "config/registry.h"

static const char SEP[] = "\n#benchmarks#\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char dir[600], tasks[700], bench[700];
    snprintf(dir, sizeof dir, "%s/cfg", fuzz_tmpdir());
    fuzz_mkdirs(dir);
    snprintf(tasks, sizeof tasks, "%s/tasks.json", dir);
    snprintf(bench, sizeof bench, "%s/benchmarks.json", dir);
    const uint8_t *sep = memmem(data, size, SEP, sizeof SEP - 1);
    if (sep) {
        size_t n1 = (size_t)(sep - data), off = n1 + sizeof SEP - 1;
        fuzz_write(tasks, data, n1);
        fuzz_write(bench, data + off, size - off);
    } else {
        fuzz_write(tasks, data, size);
        unlink(bench);
    }
    struct mieb_registry reg;
    if (mieb_registry_load(tasks, &reg) != MIEB_OK)
        return 0;
    for (int i = 0; i < reg.n_tasks; i++) {
        const struct mieb_task *t = &reg.tasks[i];
        if (mieb_registry_find(&reg, t->name) == NULL)
            abort();
        (void)mieb_task_param_bool(t, "skip_first_result");
        for (int s = 0; s < t->n_subsets; s++)
            cJSON_Delete(mieb_task_languages(t, t->subsets[s]));
        cJSON_Delete(mieb_task_languages(t, "no-such-subset"));
    }
    static const char *const names[] = {"MIEB(lite)", "lite", "(Multilingual)", "mieb(eng)", "", "MIEB"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const struct mieb_benchmark *b = mieb_registry_benchmark(&reg, names[k]);
        for (int j = 0; b && j < b->n_tasks; j++)
            if (!b->tasks[j] || !b->tasks[j]->name)
                abort();
    }
    mieb_registry_free(&reg);
    return 0;
}
