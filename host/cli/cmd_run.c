/**
 * cmd_run.c - `mieb-eval run`: score tasks and write mteb results (FORMAT.md §4).
 *
 *   mieb-eval run (--task-data DIR --embeddings DIR | --export DIR) -t TASK [TASK ...] --output-folder DIR
 *                 [--device auto|cpu|cuda|cuda:N] [-b BENCHMARK] [--mem-limit SIZE]
 *                 [--similarity cosine|dot|MaxSim] [--overwrite-strategy always|never|only-missing]
 *                 [--threads N] [-v | -q] [--log-format text|json] [--progress auto|tty|plain|off]
 *                 [--per-query DIR] [--shard-index I --num-shards K] [--task-types T...]
 *                 [--eval-splits S...] [-m MODEL] [--model-revision REV]
 *                 [--corpus-parts K --corpus-part I --partials-dir DIR]
 *
 * A task whose inputs are invalid is reported on stderr (file, dataset, what is wrong),
 * nothing is written for it, the other tasks are still scored, and the exit status is
 * MIEB_EXIT_TASK_FAILED.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dispatch/dispatch.h"
#include "cli/cli_start.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "config/model_meta.h"
#include "config/registry.h"
#include "core/escape.h"
#include "core/fileutil.h"
#include "core/mem_default.h"
#include "core/stop.h"
#include "io/results_writer.h"
#include "plan/run_loop.h"
#include "plan/task_select.h"

#define MAX_TASKS MIEB_PLAN_MAX_TASKS

struct run_opts {
    const char *task_data, *emb, *out, *device, *sim_override, *overwrite, *precision;
    const char *tasks[MAX_TASKS];
    int n_tasks;
    const char *benchmarks[16];
    int n_benchmarks;
    size_t mem_limit;
    int threads;
    struct mieb_cli_log log;          /* -v, -q, --log-format */
    enum mieb_progress_mode progress; /* --progress */
    const char *per_query;           /* --per-query DIR */
    int kmeans_full; /* --kmeans full */
    int probe_cpu;   /* --probe-device cpu */
    long shard_index, num_shards; /* --shard-index I --num-shards K; num_shards 0: not sharded */
    int shard_index_set;
    long corpus_parts, corpus_part; /* --corpus-parts K --corpus-part I; corpus_parts 0: off */
    int corpus_part_set;
    const char *partials_dir;       /* --partials-dir DIR */
    const char *task_types[32];     /* --task-types T ...: keep only tasks of these mteb types */
    int n_task_types;
    const char *eval_splits[16];    /* --eval-splits S ...: score only these splits */
    int n_eval_splits;
    const char *languages[32];      /* -l/--languages L ...: score only the subsets in these languages */
    int n_languages;
    int overwrite_given;            /* --overwrite-strategy was given (the summary says when the default skipped) */
    const char *model, *model_revision; /* -m/--model, --model-revision: must match model_meta.json */
    const char *export_dir;             /* --export DIR: DIR/task-data and DIR/embeddings */
    char export_paths[2][PATH_MAX];
};

/* --export DIR: mieb-export's output folder stands for --task-data DIR/task-data --embeddings
   DIR/embeddings; an export folder given to --task-data or --embeddings is refused with that hint. */
static int is_export_dir(const char *d)
{
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/task-data", d);
    if (!mieb_dir_exists(p))
        return 0;
    snprintf(p, sizeof p, "%s/embeddings", d);
    return mieb_dir_exists(p);
}

static int resolve_export(struct run_opts *o)
{
    if (o->export_dir) {
        if (o->task_data || o->emb) {
            mieb_fprintf_esc(stderr, "mieb-eval run: --export DIR stands for --task-data DIR/task-data --embeddings "
                            "DIR/embeddings: give one or the other\n");
            return -1;
        }
        if (snprintf(o->export_paths[0], PATH_MAX, "%s/task-data", o->export_dir) >= PATH_MAX ||
            snprintf(o->export_paths[1], PATH_MAX, "%s/embeddings", o->export_dir) >= PATH_MAX) {
            mieb_fprintf_esc(stderr, "mieb-eval run: --export: path too long\n");
            return -1;
        }
        o->task_data = o->export_paths[0];
        o->emb = o->export_paths[1];
        return 0;
    }
    const char *opt[2] = {"--task-data", "--embeddings"}, *dir[2] = {o->task_data, o->emb};
    for (int k = 0; k < 2; k++)
        if (dir[k] && is_export_dir(dir[k])) {
            mieb_fprintf_esc(stderr, "mieb-eval run: %s %s holds task-data/ and embeddings/: it is an export folder; "
                            "use --export %s (or --task-data %s/task-data --embeddings %s/embeddings)\n",
                    opt[k], dir[k], dir[k], dir[k], dir[k]);
            return -1;
        }
    return 0;
}

/* The signal that asked us to stop (SIGINT/SIGTERM: interrupted; SIGUSR1: pre-empted), or 0,
   set by core/stop.c's handler. Checked between tasks and subsets here, between corpus
   blocks by the retrieval search (mieb_run_ctx.interrupted), and once per block of work by
   the library's long loops (core/stop.h's flag), so a stop comes within about a second and
   never leaves a half-written result; a read that does not return is ended by stop.c's
   watchdog. */
static volatile sig_atomic_t interrupted;

static void run_usage(FILE *f)
{
    fputs("usage: mieb-eval run --task-data DIR --embeddings DIR -t TASK [TASK ...] --output-folder DIR\n"
          "       mieb-eval run --export DIR -t TASK [TASK ...] --output-folder DIR   (same options)\n"
          "                     [--device auto|cpu|cuda|cuda:N] [-b BENCHMARK] [--mem-limit SIZE]\n"
          "                     [--similarity cosine|dot|MaxSim] [--overwrite-strategy always|never|only-missing] [-l LANG...]\n"
          "                     [--threads N] [--precision fp32|tf32|bf16] [-v | -q]\n"
          "                     [--log-format text|json] [--progress auto|tty|plain|off] [--per-query DIR]\n"
          "                     [--shard-index I --num-shards K] [--task-types T...] [--eval-splits S...]\n"
          "                     [-m MODEL] [--model-revision REV]\n"
          "                     [--corpus-parts K --corpus-part I --partials-dir DIR]\n"
          "\n"
          "  --task-data DIR      folder of <TaskName>.h5 ground-truth files\n"
          "  --embeddings DIR     folder with model_meta.json and <TaskName>/<split>/<subset>/<role>.h5\n"
          "  --export DIR         mieb-export's output folder: --task-data DIR/task-data --embeddings DIR/embeddings\n"
          "  -t, --tasks TASK...  tasks to score (names as in mteb)\n"
          "  -b, --benchmark B    every task of a benchmark: MIEB(eng), MIEB(Multilingual), MIEB(lite), MIEB(Img)\n"
          "  --task-types T...    keep only tasks of these types (e.g. Any2AnyRetrieval ImageClustering); alone,\n"
          "                       every registry task of those types whose task data is present\n"
          "  --eval-splits S...   score only these splits (mteb's eval_splits); a task with none is skipped\n"
          "  -l, --languages L... score only the subsets in these languages, as mteb's languages= (ISO 639-3\n"
          "                       such as eng, or with the script, eng-Latn); a task with none is skipped\n"
          "  -m, --model NAME     check that model_meta.json names this model (mteb's -m); refuse otherwise\n"
          "  --model-revision R   check the model revision likewise\n"
          "  --output-folder DIR  results go to DIR/results/<org>__<model>/<revision>/<TaskName>.json\n"
          "  --device D           auto (CUDA if usable, else CPU), cpu, cuda, cuda:N   [auto]\n"
          "  --mem-limit SIZE     memory for embeddings and search state: a number with an optional K, M, G\n"
          "                       or T suffix (powers of 1024), e.g. 512M, 8G, 1.5G; at least 4K [half of the\n"
          "                       smallest of RAM, this process's cgroup memory limit (v2 memory.max, v1\n"
          "                       memory.limit_in_bytes) and Slurm's SLURM_MEM_PER_NODE or SLURM_MEM_PER_CPU\n"
          "                       x CPUs; -v logs which]\n"
          "  --similarity S       override model_meta.json's similarity_fn_name\n"
          "  --overwrite-strategy always | never | only-missing (skip tasks whose result is there and whole;\n"
          "                       a file that is not a result of the task, with every split and subset\n"
          "                       this run writes, is kept as <Task>.json.bad-<UTC time> and the task\n"
          "                       scored again) [only-missing, as mteb: a rerun resumes]\n"
          "  --threads N          CPU threads; 0 = the CPUs this process may use [0]\n"
          "  --precision P        similarity arithmetic: fp32 (exact, default); tf32 or bf16 on CUDA only,\n"
          "                       faster, recorded in each result as similarity_precision\n"
          "  --kmeans M           ImageClustering: minibatch (mteb's MiniBatchKMeans, default) or full\n"
          "                       (full-batch Lloyd, faster; recorded in each result as kmeans_mode)\n"
          "  --probe-device D     ImageClassification linear probes: auto (the --device backend: on CUDA the\n"
          "                       experiments are fitted in lockstep on the GPU, equal to sklearn within\n"
          "                       float32 rounding) or cpu (sklearn's bits, on the CPU threads)   [auto]\n"
          "  --per-query DIR      retrieval: per (task, split, subset) DIR/<task>/<split>/<subset>/ gets\n"
          "                       run.trec (qid Q0 docid rank score mieb-eval, trec_eval's ranking of the\n"
          "                       results mteb scores), per_query.tsv (trec_eval -q style: measure, qid,\n"
          "                       value; ndcg_cut_K map_cut_K recall_K P_K success_K mrr_cut_K, then 'all'\n"
          "                       means) and qrels.trec; every other family: predictions.tsv, one line\n"
          "                       per sample (zero-shot: index label prediction; clustering: index label\n"
          "                       cluster; probe: index label prediction_E...; VOC2007, compositionality,\n"
          "                       STS: see README); STS aggregates: aggregate.tsv. `mieb-eval compare`\n"
          "                       reads these folders\n"
          "  --shard-index I      with --num-shards K: score only this process's share of the task list,\n"
          "  --num-shards K       for K processes (machines, GPUs) run side by side with the same arguments:\n"
          "                       the final task list (-t names in order, then each -b benchmark's tasks in\n"
          "                       mteb's order, without duplicates and without the benchmark tasks skipped\n"
          "                       for absent inputs) is split deterministically by each task's cost from\n"
          "                       the registry's sizes: costliest first, each to the shard with the least\n"
          "                       work so far (equal costs: task j to shard j % K); 0 <= I < K. The K\n"
          "                       shards together score every task once; they may share one --output-folder\n"
          "  --corpus-parts K     with --corpus-part I and --partials-dir DIR: retrieval tasks search only\n"
          "  --corpus-part I      part I of the corpus (a contiguous range of mteb's 50,000-document chunks)\n"
          "  --partials-dir DIR   with ALL queries and write DIR/<task>/<split>/<subset>/part-IIIII-of-KKKKK.h5\n"
          "                       instead of a result; `mieb-eval merge` turns the K parts into the result\n"
          "                       a single process writes. Candidate-list subsets are scored whole by part 0.\n"
          "                       Other task types are scored normally by part 0 only. Combines with\n"
          "                       --shard-index/--num-shards; only-missing/never keep complete parts\n"
          "  -v, --verbose        debug logging\n"
          "  -q, --quiet          warnings and errors only (no progress)\n"
          "  --log-format F       text (default) or json: one JSON object per line on stderr\n"
          "                       {time, level, msg, task, split, subset} for log collectors\n"
          "  --progress M         auto (default: a live line on a terminal, else a plain line every few\n"
          "                       seconds and at each task end), tty, plain or off\n"
          "\n"
          "Logs and progress go to stderr; stdout gets only the results folder.\n"
          "\n"
          "exit status:\n"
          "    0  every requested task was scored (or skipped by --overwrite-strategy)\n"
          "    1  at least one task failed (invalid or missing inputs): named on stderr with the file\n"
          "       and dataset at fault, nothing written for it; the other tasks were scored\n"
          "    2  bad command line (unknown option, task or benchmark, a bad option value, an empty\n"
          "       path, an input folder that is not one)\n"
          "    3  --device cuda and no usable GPU (or a build without CUDA)\n"
          "    4  could not run at all (unreadable registry or model_meta.json, output folder not\n"
          "       writable, CUDA failure)\n"
          "   75  pre-empted (SIGUSR1, e.g. Slurm's --signal=B:USR1@120 before the time limit):\n"
          "       stopped within about a second, finished results are kept, nothing\n"
          "       half-done is written; rerun the same command with --overwrite-strategy\n"
          "       only-missing to resume\n"
          "  130  interrupted (SIGINT/SIGTERM): stopped within about a second, or 5 s after the\n"
          "       signal when blocked in a read that does not return (a second signal: at once);\n"
          "       finished results are kept; rerun with --overwrite-strategy only-missing to resume\n",
          f);
}

/* The smallest --mem-limit: one page. Tests and tiny corpora use a few KiB to force many
   blocks; below that a value is a mistake such as "0.4" for 0.4G, which used to become 0
   bytes and so silently half of RAM. */
#define MIN_MEM_LIMIT ((size_t)4096)

/* --device: auto, cpu, cuda or cuda:N (N a whole number), before any backend starts. */
static bool device_ok(const char *val)
{
    long long n;
    if (!strcmp(val, "auto") || !strcmp(val, "cpu") || !strcmp(val, "cuda") ||
        (!strncmp(val, "cuda:", 5) && mieb_cli_parse_i64(val + 5, 0, INT_MAX, &n)))
        return true;
    mieb_cli_bad_value("run", "--device", val, "auto, cpu, cuda or cuda:N");
    return false;
}

/* --similarity: what model_meta.json's similarity_fn_name may say, but never empty
   (mieb_sim_parse reads an empty name as cosine). */
static bool similarity_ok(const char *val)
{
    enum mieb_sim sim;
    if (val[0] && mieb_sim_parse(val, &sim) == MIEB_OK)
        return true;
    mieb_cli_bad_value("run", "--similarity", val, "cosine, dot or MaxSim");
    return false;
}


/* One option's value: "needs a value" when the command line ends before it. */
#define NEED_VAL()                                                      \
    do {                                                                \
        if (!val) {                                                     \
            mieb_fprintf_esc(stderr, "mieb-eval run: %s needs a value\n", a);    \
            return -1;                                                  \
        }                                                               \
        (*i)++;                                                         \
    } while (0)

/* The options naming folders, the model and the benchmarks: 1 when `a` is one and was taken,
   0 when it is none of them, -1 on a bad value (said on stderr). */
static int parse_place(struct run_opts *o, const char *a, const char *val, int *i)
{
    if (!strcmp(a, "--task-data") || !strcmp(a, "--embeddings")) {
        NEED_VAL();
        if (!mieb_cli_dir("run", a, val))
            return -1;
        *(a[2] == 't' ? &o->task_data : &o->emb) = val;
    } else if (!strcmp(a, "--export")) {
        NEED_VAL();
        o->export_dir = val;
    } else if (!strcmp(a, "--output-folder") || !strcmp(a, "--output_folder") || !strcmp(a, "--partials-dir") ||
               !strcmp(a, "--per-query")) {
        NEED_VAL();
        if (!mieb_cli_out_dir("run", a, val))
            return -1;
        *(a[2] == 'o' ? &o->out : a[3] == 'a' ? &o->partials_dir : &o->per_query) = val;
    } else if (!strcmp(a, "-b") || !strcmp(a, "--benchmark") || !strcmp(a, "--benchmarks")) {
        NEED_VAL();
        if (o->n_benchmarks < 16)
            o->benchmarks[o->n_benchmarks++] = val;
    } else if (!strcmp(a, "-m") || !strcmp(a, "--model")) {
        NEED_VAL();
        o->model = val;
    } else if (!strcmp(a, "--model-revision")) {
        NEED_VAL();
        o->model_revision = val;
    } else {
        return 0;
    }
    return 1;
}

/* One of the listed choices for `a` (mieb_cli_choice): its index, or -1 after saying why not. */
static int choice(const char *a, const char *val, const char *const *choices)
{
    int k;
    return mieb_cli_choice("run", a, val, choices, &k) ? k : -1;
}

/* The options with one of a few named values: as parse_place. */
static int parse_choice(struct run_opts *o, const char *a, const char *val, int *i)
{
    static const char *const ways[] = {"always", "never", "only-missing", NULL};
    static const char *const precs[] = {"fp32", "tf32", "bf16", NULL};
    static const char *const kmeans[] = {"minibatch", "full", NULL};
    static const char *const devs[] = {"auto", "cpu", NULL};
    static const char *const modes[] = {"auto", "tty", "plain", "off", NULL}; /* enum mieb_progress_mode order */
    const char *const *choices = !strcmp(a, "--overwrite-strategy") ? ways
                                 : !strcmp(a, "--precision")        ? precs
                                 : !strcmp(a, "--kmeans")           ? kmeans
                                 : !strcmp(a, "--probe-device")     ? devs
                                 : !strcmp(a, "--progress")         ? modes
                                                                    : NULL;
    if (!choices)
        return 0;
    NEED_VAL();
    int k = choice(a, val, choices);
    if (k < 0)
        return -1;
    if (choices == ways) {
        o->overwrite = ways[k];
        o->overwrite_given = 1;
    } else if (choices == precs) {
        o->precision = precs[k];
    } else if (choices == kmeans) {
        o->kmeans_full = k == 1;
    } else if (choices == devs) {
        o->probe_cpu = k == 1;
    } else {
        o->progress = (enum mieb_progress_mode)k;
    }
    return 1;
}

/* The options with a number, and --device and --similarity: as parse_place. */
static int parse_setting(struct run_opts *o, const char *a, const char *val, int *i)
{
    long long v;
    if (!strcmp(a, "--device") || !strcmp(a, "--similarity")) {
        NEED_VAL();
        if (!(a[2] == 'd' ? device_ok : similarity_ok)(val))
            return -1;
        *(a[2] == 'd' ? &o->device : &o->sim_override) = val;
    } else if (!strcmp(a, "--mem-limit")) {
        NEED_VAL();
        if (!mieb_cli_size("run", a, val, MIN_MEM_LIMIT, &o->mem_limit))
            return -1;
    } else if (!strcmp(a, "--threads")) {
        NEED_VAL();
        if (!mieb_cli_int("run", a, val, 0, 4096, &v)) /* atoi made "x" and "-3" mean all cores */
            return -1;
        o->threads = (int)v;
    } else if (!strcmp(a, "--shard-index") || !strcmp(a, "--num-shards")) {
        NEED_VAL();
        if (!mieb_cli_int("run", a, val, 0, INT_MAX, &v))
            return -1;
        if (a[2] == 's') {
            o->shard_index = v;
            o->shard_index_set = 1;
        } else if (v < 1) {
            mieb_fprintf_esc(stderr, "mieb-eval run: --num-shards must be at least 1\n");
            return -1;
        } else {
            o->num_shards = v;
        }
    } else if (!strcmp(a, "--corpus-parts") || !strcmp(a, "--corpus-part")) {
        NEED_VAL();
        if (!mieb_cli_int("run", a, val, 0, 99999, &v))
            return -1;
        if (!strcmp(a, "--corpus-part")) {
            o->corpus_part = v;
            o->corpus_part_set = 1;
        } else if (v < 1) {
            mieb_fprintf_esc(stderr, "mieb-eval run: --corpus-parts must be at least 1\n");
            return -1;
        } else {
            o->corpus_parts = v;
        }
    } else {
        return 0;
    }
    return 1;
}
#undef NEED_VAL

/* The options taking one or more names up to the next option (mteb's nargs="+"): -t, --task-types,
   --eval-splits, -l: as parse_place; *i moves past the names. */
static int parse_list(struct run_opts *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    int tasks = !strcmp(a, "-t") || !strcmp(a, "--tasks"), types = !strcmp(a, "--task-types");
    int langs = !strcmp(a, "-l") || !strcmp(a, "--languages"), got = 0;
    if (!tasks && !types && !langs && strcmp(a, "--eval-splits"))
        return 0;
    int *n = tasks ? &o->n_tasks : types ? &o->n_task_types : langs ? &o->n_languages : &o->n_eval_splits;
    const char **dst = tasks ? o->tasks : types ? o->task_types : langs ? o->languages : o->eval_splits;
    int cap = tasks ? MAX_TASKS : types || langs ? 32 : 16;
    while (*i + 1 < argc && argv[*i + 1][0] != '-') {
        if (*n >= cap) {
            mieb_fprintf_esc(stderr, tasks ? "mieb-eval run: too many tasks\n" : "mieb-eval run: too many values for %s\n", a);
            return -1;
        }
        if (!tasks && !argv[*i + 1][0]) { /* names nothing: every task would be skipped, exit 0 */
            mieb_cli_bad_value("run", a, "", types ? "a task type" : langs ? "a language" : "a split name");
            return -1;
        }
        dst[(*n)++] = argv[++*i];
        got++;
    }
    if (!got) {
        mieb_fprintf_esc(stderr, tasks ? "mieb-eval run: %s needs at least one task name\n"
                              : "mieb-eval run: %s needs at least one value\n",
                a);
        return -1;
    }
    return 1;
}

/* The options that go together or exclude each other, once all are read: 0, or -1 after saying
   what is wrong. */
static int check_combination(const struct run_opts *o)
{
    const char *bad = NULL;
    if (!o->task_data || !o->emb || !o->out)
        bad = "--task-data and --embeddings (or --export) and --output-folder are required";
    else if (!o->n_tasks && !o->n_benchmarks && !o->n_task_types)
        bad = "name tasks with -t, a benchmark with -b, or task types with --task-types";
    else if (o->shard_index_set && !o->num_shards)
        bad = "--shard-index needs --num-shards";
    else if (o->num_shards && !o->shard_index_set)
        bad = "--num-shards needs --shard-index";
    if (bad) {
        mieb_fprintf_esc(stderr, "mieb-eval run: %s\n", bad);
        return -1;
    }
    if (o->num_shards && o->shard_index >= o->num_shards) {
        mieb_fprintf_esc(stderr, "mieb-eval run: --shard-index %ld out of range: 0 <= I < --num-shards (%ld)\n",
                o->shard_index, o->num_shards);
        return -1;
    }
    if ((o->corpus_parts || o->corpus_part_set || o->partials_dir) &&
        (!o->corpus_parts || !o->corpus_part_set || !o->partials_dir)) {
        mieb_fprintf_esc(stderr, "mieb-eval run: --corpus-parts, --corpus-part and --partials-dir go together\n");
        return -1;
    }
    if (o->corpus_parts && o->corpus_part >= o->corpus_parts) {
        mieb_fprintf_esc(stderr, "mieb-eval run: --corpus-part %ld out of range: 0 <= I < --corpus-parts (%ld)\n",
                o->corpus_part, o->corpus_parts);
        return -1;
    }
    return 0;
}

/* The command line into o; -v with -q is refused by mieb_cli_start. */
static enum mieb_cli_parsed parse_args(int argc, char **argv, struct run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->device = "auto";
    o->overwrite = "only-missing"; /* mteb's default: a rerun resumes */
    o->precision = "fp32";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        int r;
        if (mieb_cli_is_help(a)) {
            return MIEB_CLI_HELP;
        } else if ((r = mieb_cli_log_option("run", &o->log, argc, argv, &i)) || (r = parse_place(o, a, val, &i)) ||
                   (r = parse_choice(o, a, val, &i)) || (r = parse_setting(o, a, val, &i)) ||
                   (r = parse_list(o, argc, argv, &i))) {
            if (r < 0)
                return MIEB_CLI_BAD;
        } else {
            mieb_fprintf_esc(stderr, "mieb-eval run: unknown option '%s'\n", a);
            return MIEB_CLI_BAD;
        }
    }
    return resolve_export(o) == 0 && check_combination(o) == 0 ? MIEB_CLI_GO : MIEB_CLI_BAD;
}

/* The run's closing summary: counts, each task's main score, each failure's first error, a hint
   to inspect when inputs are missing; with --log-format json one record. Then the manifest. */
static void closing_summary(const struct run_opts *o, struct mieb_outcomes *oc, struct mieb_manifest *man,
                            const char *results_dir)
{
    static const char *const kind[] = {"scored", "skipped", "FAILED"};
    int missing = 0;
    /* -q: nothing on success, only the failures otherwise; json logs: one record, text: a table */
    if ((!o->log.quiet || oc->counts[MIEB_OUTCOME_FAILED]) &&
        !mieb_cli_record("summary", "summary", mieb_outcomes_json(oc, results_dir))) {
        mieb_cli_say(MIEB_LOG_INFO, "mieb-eval: ", "summary: %d scored, %d skipped, %d failed; results in %s",
                     oc->counts[MIEB_OUTCOME_SCORED], oc->counts[MIEB_OUTCOME_SKIPPED],
                     oc->counts[MIEB_OUTCOME_FAILED], results_dir);
        for (int i = 0; i < oc->n; i++) {
            const struct mieb_outcome *e = &oc->v[i];
            char score[32] = "-";
            if (!isnan(e->main_score))
                snprintf(score, sizeof score, "%.4f", e->main_score);
            if (e->kind == MIEB_OUTCOME_FAILED || !o->log.quiet)
                mieb_cli_say(MIEB_LOG_INFO, "", "  %-44s %-8s %8s %8.1f s%s%s", e->task, kind[e->kind], score,
                             e->seconds, e->note ? "  " : "", e->note ? e->note : "");
        }
    }
    for (int i = 0; i < oc->n; i++)
        missing |= oc->v[i].missing_input;
    if (missing)
        mieb_cli_say(MIEB_LOG_INFO, "mieb-eval: ",
                     "hint: inputs are missing; `mieb-eval inspect --task-data %s --embeddings %s -t TASK` "
                     "lists what each task needs and what is there",
                     o->task_data, o->emb);
    char path[PATH_MAX + 128];
    if (mieb_manifest_finish(man, mieb_outcomes_json(oc, results_dir), results_dir, path, sizeof path) == MIEB_OK)
        MIEB_LOGD("run manifest: %s", path);
    else
        MIEB_LOGW("the run manifest was not written: %s", mieb_last_error());
}


/* --mem-limit unset: half of RAM, of the cgroup's limit or of Slurm's allocation (mem_default.h). */
static size_t default_mem_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    char why[512];
    size_t v = mieb_mem_default(NULL, pages > 0 && psz > 0 ? (size_t)pages * (size_t)psz : 0, why, sizeof why);
    MIEB_LOGD("--mem-limit default: %s", why);
    return v;
}

/* The ordered task list of this process (plan/task_select.h): an exit status. */
static int select_tasks(const struct run_opts *o, struct mieb_registry *reg, struct mieb_task_list *todo)
{
    struct mieb_task_select sel = {
        .purpose = MIEB_SELECT_RUN, .task_data = o->task_data,
        .tasks = o->tasks, .n_tasks = o->n_tasks, .benchmarks = o->benchmarks, .n_benchmarks = o->n_benchmarks,
        .task_types = o->task_types, .n_task_types = o->n_task_types,
        .eval_splits = o->eval_splits, .n_eval_splits = o->n_eval_splits,
        .languages = o->languages, .n_languages = o->n_languages,
        .shard_index = o->shard_index, .num_shards = o->num_shards,
    };
    mieb_status st = mieb_select_tasks(reg, &sel, todo);
    if (st == MIEB_OK)
        return MIEB_EXIT_OK;
    bool usage = st == MIEB_ERR_INVALID_ARG;
    mieb_cli_say(MIEB_LOG_ERROR, usage ? "mieb-eval run: " : "mieb-eval: error: ", "%s", mieb_last_error());
    return usage ? MIEB_EXIT_USAGE : MIEB_EXIT_FATAL;
}

/* The model (model_meta.json, checked against -m/--model-revision, --similarity applied), the
   backend and the results folder (model_meta.json copied there): an exit status; on success
   *be is the backend and meta's parsed fields stay (its text is freed). */
static int open_model(const struct run_opts *o, struct mieb_model_meta *meta, struct mieb_backend **be,
                      char *results_dir, size_t n)
{
    struct mieb_backend_opts bo = {0};
    mieb_status st;
    if (mieb_model_meta_load(o->emb, meta) != MIEB_OK) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval: error: ", "%s", mieb_last_error());
        return MIEB_EXIT_FATAL;
    }
    int rc = MIEB_EXIT_OK;
    if ((o->model && strcmp(o->model, meta->name)) || (o->model_revision && strcmp(o->model_revision, meta->revision))) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval run: ", "%s: the embeddings are of model %s revision %s, not %s %s",
                     meta->path, meta->name, meta->revision, o->model ? o->model : meta->name,
                     o->model_revision ? o->model_revision : meta->revision);
        rc = MIEB_EXIT_USAGE;
    } else if (o->sim_override && mieb_sim_parse(o->sim_override, &meta->sim) != MIEB_OK) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval run: ", "--similarity: %s", mieb_last_error());
        rc = MIEB_EXIT_USAGE;
    }
    bo.mem_limit = o->mem_limit;
    bo.n_threads = o->threads;
    bo.precision = !strcmp(o->precision, "tf32") ? MIEB_PREC_TF32 : !strcmp(o->precision, "bf16") ? MIEB_PREC_BF16 : MIEB_PREC_FP32;
    if (rc == MIEB_EXIT_OK && (st = mieb_backend_init(o->device, &bo, be)) != MIEB_OK) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval: error: ", "%s", mieb_last_error());
        rc = st == MIEB_ERR_NO_DEVICE ? MIEB_EXIT_NO_DEVICE : MIEB_EXIT_USAGE;
    } else if (rc == MIEB_EXIT_OK && bo.precision != MIEB_PREC_FP32 && !strcmp((*be)->iface.name, "cpu")) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval run: ",
                     "--precision %s needs the CUDA backend; the CPU backend computes in fp32", o->precision);
        rc = MIEB_EXIT_USAGE;
    } else if (rc == MIEB_EXIT_OK &&
               (mieb_results_dir(o->out, meta->name, meta->revision, results_dir, n) != MIEB_OK ||
                mieb_results_write_model_meta(results_dir, meta->text, meta->text_len) != MIEB_OK)) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval: error: ", "%s", mieb_last_error());
        rc = MIEB_EXIT_FATAL;
    }
    mieb_model_meta_free(meta); /* copied: only the parsed fields are used from here */
    if (rc != MIEB_EXIT_OK && *be) {
        mieb_backend_free(*be);
        *be = NULL;
    }
    return rc;
}

/* The exit status of a run that scored what it could: a stop signal's, else 4 after a device
   failure, 1 after a task failure, 0. */
static int run_exit(int failed, int fatal)
{
    if (interrupted == SIGUSR1) {
        mieb_cli_say(MIEB_LOG_WARN, "mieb-eval: ",
                     "pre-empted (SIGUSR1); finished results are kept, rerun the same command with "
                     "--overwrite-strategy only-missing to resume");
        return MIEB_EXIT_PREEMPTED;
    }
    if (interrupted) {
        mieb_cli_say(MIEB_LOG_WARN, "mieb-eval: ",
                     "interrupted; finished results are kept, rerun with --overwrite-strategy only-missing to resume");
        return MIEB_EXIT_INTERRUPTED;
    }
    return fatal ? MIEB_EXIT_FATAL : failed ? MIEB_EXIT_TASK_FAILED : MIEB_EXIT_OK;
}

/* Score the list (plan/run_loop.h) with progress, then the closing summary and the manifest. */
static int score_all(const struct run_opts *o, const struct mieb_registry *reg, const struct mieb_task_list *todo,
                     const struct mieb_model_meta *meta, struct mieb_backend *be, const char *results_dir,
                     int argc, char **argv)
{
    mieb_run_plan_outputs(results_dir, o->per_query, o->partials_dir, 1);
    if (mieb_stop_install(&interrupted) != MIEB_OK) /* SIGUSR1: pre-emption notice (MIEB_EXIT_PREEMPTED) */
        MIEB_LOGW("%s; a run stuck after SIGINT/SIGTERM will not be ended", mieb_last_error());
    struct mieb_run_ctx rc = {.emb_dir = o->emb, .be = be, .sim = meta->sim, .mem_limit = o->mem_limit,
                              .kmeans_full = o->kmeans_full, .probe_cpu = o->probe_cpu, .n_threads = o->threads,
                              .per_query_dir = o->per_query, .interrupted = &interrupted};
    MIEB_LOGI("scoring %d task(s) for %s on %s (similarity %s)", todo->n, meta->name, be->iface.name,
              mieb_sim_name(meta->sim));
    long total_units = 0;
    for (int i = 0; i < todo->n; i++)
        total_units += mieb_task_units(todo->v[i]); /* --per-query: every family writes its files */
    mieb_progress_start(o->progress, todo->n, total_units, 0.0);
    struct mieb_outcomes outcomes = {0};
    struct mieb_manifest man;
    if (mieb_manifest_begin(&man, argc, argv, be->iface.name, o->precision, meta->name, meta->revision) != MIEB_OK)
        MIEB_LOGW("no run manifest: %s", mieb_last_error());
    /* corpus parts: retrieval tasks write this part's partials, host/cluster/corpus_parts.h */
    struct mieb_part_opts part = {.dir = o->partials_dir, .part = o->corpus_part, .n_parts = o->corpus_parts,
                                  .task_data = o->task_data, .skip_existing = strcmp(o->overwrite, "always") != 0,
                                  .meta = meta, .precision = o->precision};
    struct mieb_run_plan plan = {.reg = reg, .rc = &rc, .task_data = o->task_data, .results_dir = results_dir,
                                 .overwrite = o->overwrite, .overwrite_given = o->overwrite_given,
                                 .precision = o->precision, .part = o->corpus_parts ? &part : NULL, .man = &man,
                                 .hooks = &mieb_cli_loop_hooks};
    int failed = 0, fatal = 0;
    mieb_run_plan_score(&plan, todo, &outcomes, &failed, &fatal);
    mieb_progress_stop();
    closing_summary(o, &outcomes, &man, results_dir);
    int rc_exit = run_exit(failed, fatal);
    mieb_printf_esc("%s\n", results_dir);
    mieb_outcomes_free(&outcomes);
    mieb_manifest_free(&man);
    return rc_exit;
}

static const struct mieb_cli_command run_command = {"run", run_usage};

int mieb_cmd_run(int argc, char **argv)
{
    struct run_opts o;
    struct mieb_registry reg = {0};
    struct mieb_model_meta meta;
    struct mieb_backend *be = NULL;
    char results_dir[PATH_MAX];
    struct mieb_task_list todo;
    int rc;

    if (!mieb_cli_start(&run_command, parse_args(argc, argv, &o), &o.log, &rc))
        return rc;
    if (!o.mem_limit)
        o.mem_limit = default_mem_limit();
    if (mieb_registry_load_default(&reg) != MIEB_OK) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval: error: ", "%s", mieb_last_error());
        return MIEB_EXIT_FATAL;
    }
    rc = select_tasks(&o, &reg, &todo);
    if (rc == MIEB_EXIT_OK)
        rc = open_model(&o, &meta, &be, results_dir, sizeof results_dir);
    if (rc == MIEB_EXIT_OK)
        rc = score_all(&o, &reg, &todo, &meta, be, results_dir, argc, argv);
    mieb_backend_free(be);
    mieb_registry_free(&reg);
    return rc;
}
