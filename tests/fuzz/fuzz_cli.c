/*
 * fuzz_cli.c - the command line of every subcommand (mieb_cmd_run, _synth, _summary,
 * _inspect, _list_tasks, _merge, _compare, _report, _parity): argument parsing and option
 * values (cli_args.c), and whatever the parsed options then do on a tiny synthetic suite.
 *
 * Input: the arguments separated by NUL bytes; the first is the command. The process works
 * in its private temp dir, which holds suite/ (made by `synth` once) and nothing else that
 * matters, and the harness keeps every path inside it: an argument that starts with '/'
 * gets a leading 'x', and ".." becomes "__". Numbers are clamped (values above 64 become 8,
 * --scale above 0.01 becomes 0.001) and synth without --tasks gets one, so an input cannot
 * ask for gigabytes or hours. Everything a command writes is removed after each input.
 */
#define _GNU_SOURCE
#include "fuzz_common.h"

#include <ftw.h>

#include "cli/cli_commands.h"
#include "cli/commands.h"

#define MAX_ARGS 64

/* nftw callback: remove everything in the temp dir except suite/ (depth first) */
static int rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag;
    if (ftw->level == 0)
        return 0;
    const char *rel = path + strlen(fuzz_tmpdir()) + 1;
    if (strncmp(rel, "suite", 5) == 0 && (rel[5] == '\0' || rel[5] == '/'))
        return 0;
    remove(path);
    return 0;
}

static void make_suite(void)
{
    static int made;
    if (made)
        return;
    made = 1;
    char *argv[] = {"synth", "--out", "suite", "--tasks",
                    "CIRRIT2IRetrieval,Country211,VOC2007,CIFAR10ZeroShot,CIFAR10Clustering,AROCocoOrder,STS12VisualSTS",
                    "--scale", "0.001", "--dim", "8", NULL};
    if (mieb_cmd_synth(9, argv) != 0) {
        fprintf(stderr, "fuzz_cli: synth of the suite failed: %s\n", mieb_last_error());
        abort();
    }
}

static void sanitize_arg(char *a, const char *prev)
{
    for (char *p = strstr(a, ".."); p; p = strstr(p, ".."))
        p[0] = p[1] = '_';
    char *end = NULL;
    double v = strtod(a, &end);
    if (end != a && *end == '\0' && (v > 64 || v < -64))
        strcpy(a, "8");
    else if (prev && !strcmp(prev, "--scale") && end != a && v > 0.01)
        strcpy(a, "0.001");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *tmp = fuzz_tmpdir();
    static int in_tmp;
    if (!in_tmp) {
        if (chdir(tmp) != 0)
            abort();
        in_tmp = 1;
        setenv("MIEB_REGISTRY", MIEB_SOURCE_DIR "/configs/tasks.json", 1);
    }
    make_suite();
    if (size > 4096)
        return 0;
    /* split at NULs into at most MAX_ARGS arguments; +2 for a leading 'x' per argument */
    char *buf = malloc(2 * size + 2 * MAX_ARGS + 64);
    char *argv[MAX_ARGS + 4];
    int argc = 0;
    size_t i = 0;
    char *w = buf;
    while (i <= size && argc < MAX_ARGS) {
        const uint8_t *nul = memchr(data + i, 0, size - i);
        size_t len = nul ? (size_t)(nul - (data + i)) : size - i;
        argv[argc] = w;
        if (len && data[i] == '/')
            *w++ = 'x';
        memcpy(w, data + i, len);
        w[len] = '\0';
        w += len + 1;
        argc++;
        i += len + 1;
        if (!nul)
            break;
    }
    if (argc == 0) {
        free(buf);
        return 0;
    }
    int is_synth = !strcmp(argv[0], "synth");
    int has_tasks = 0;
    for (int k = 1; k < argc; k++) {
        sanitize_arg(argv[k], argv[k - 1]);
        if (!strcmp(argv[k], "--tasks"))
            has_tasks = 1;
    }
    char t1[] = "--tasks", t2[] = "CIRRIT2IRetrieval";
    if (is_synth && !has_tasks) {
        argv[argc++] = t1;
        argv[argc++] = t2;
    }
    argv[argc] = NULL;
    /* as main() hands them over: --opt=value split, mteb's underscores read as hyphens, the
       command's lists as its table reads them; then main's dispatch, by cli_commands.h's table */
    const struct mieb_command *cmd = mieb_command_named(argv[0]);
    int n_norm = 0;
    char **norm = mieb_cli_normalize(argc, argv, 0, cmd ? cmd->spec : NULL, &n_norm);
    if (!norm) {
        free(buf);
        return 0;
    }

    int rc = 0;
    if (!mieb_cli_refuse_controls(norm[0], n_norm, norm)) /* as main() refuses them, before the command */
        rc = 2;
    else if (cmd)
        rc = cmd->run(n_norm, norm);
    /* documented exit statuses only (README "Exit status") */
    if (!(rc == 0 || rc == 1 || rc == 2 || rc == 3 || rc == 4))
        abort();
    free(norm);
    free(buf);
    nftw(tmp, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}
