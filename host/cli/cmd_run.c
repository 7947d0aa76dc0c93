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
#include "cli/commands.h"
#include "cli/progress.h"
#include "cluster/corpus_parts.h"
#include "config/model_meta.h"
#include "config/registry.h"
#include "config/suggest.h"
#include "core/fileutil.h"
#include "core/mem_default.h"
#include "core/set_aside.h"
#include "core/stop.h"
#include "core/tmpfiles.h"
#include "families/family.h"
#include "io/results_check.h"
#include "plan/manifest.h"
#include "plan/run_outcome.h"
#include "plan/task_shards.h"
#include "io/results_writer.h"
#include "io/task_data.h"

#define MAX_TASKS 512

struct run_opts {
    const char *task_data, *emb, *out, *device, *sim_override, *overwrite, *precision;
    const char *tasks[MAX_TASKS];
    int n_tasks;
    const char *benchmarks[16];
    int n_benchmarks;
    size_t mem_limit;
    int threads, verbose, quiet;
    enum mieb_log_format log_format; /* --log-format */
    enum mieb_progress_mode progress; /* --progress */
    const char *per_query;           /* --per-query DIR */
    int kmeans_full; /* --kmeans full */
    int probe_cpu;   /* --probe-device cpu */
    /* ---- task sharding (issue 6) ---- */
    long shard_index, num_shards; /* --shard-index I --num-shards K; num_shards 0: not sharded */
    int shard_index_set;
    /* ---- end of task sharding ---- */
    long corpus_parts, corpus_part; /* --corpus-parts K --corpus-part I (issue 6); corpus_parts 0: off */
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
            fprintf(stderr, "mieb-eval run: --export DIR stands for --task-data DIR/task-data --embeddings "
                            "DIR/embeddings: give one or the other\n");
            return -1;
        }
        if (snprintf(o->export_paths[0], PATH_MAX, "%s/task-data", o->export_dir) >= PATH_MAX ||
            snprintf(o->export_paths[1], PATH_MAX, "%s/embeddings", o->export_dir) >= PATH_MAX) {
            fprintf(stderr, "mieb-eval run: --export: path too long\n");
            return -1;
        }
        o->task_data = o->export_paths[0];
        o->emb = o->export_paths[1];
        return 0;
    }
    const char *opt[2] = {"--task-data", "--embeddings"}, *dir[2] = {o->task_data, o->emb};
    for (int k = 0; k < 2; k++)
        if (dir[k] && is_export_dir(dir[k])) {
            fprintf(stderr, "mieb-eval run: %s %s holds task-data/ and embeddings/: it is an export folder; "
                            "use --export %s (or --task-data %s/task-data --embeddings %s/embeddings)\n",
                    opt[k], dir[k], dir[k], dir[k], dir[k]);
            return -1;
        }
    return 0;
}

/* The signal that asked us to stop (SIGINT/SIGTERM: interrupted; SIGUSR1: pre-empted), or 0,
   set by core/stop.c's handler. Checked between tasks and subsets here, and between corpus
   blocks by the retrieval search (mieb_run_ctx.interrupted), so a stop never leaves a
   half-written result; a run stuck elsewhere is ended by stop.c's watchdog. */
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
          "       stopped at the next block or task boundary, finished results are kept, nothing\n"
          "       half-done is written; rerun the same command with --overwrite-strategy\n"
          "       only-missing to resume\n"
          "  130  interrupted (SIGINT/SIGTERM): stopped at the next block or task boundary, or 5 s\n"
          "       after the signal wherever it was blocked (a second signal: at once); finished\n"
          "       results are kept; rerun with --overwrite-strategy only-missing to resume\n",
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

static int parse_args(int argc, char **argv, struct run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->device = "auto";
    o->overwrite = "only-missing"; /* mteb's default: a rerun resumes */
    o->precision = "fp32";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VAL()                                                      \
    do {                                                                \
        if (!val) {                                                     \
            fprintf(stderr, "mieb-eval run: %s needs a value\n", a);    \
            return -1;                                                  \
        }                                                               \
        i++;                                                            \
    } while (0)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            run_usage(stdout);
            return 1;
        } else if (!strcmp(a, "--task-data")) {
            NEED_VAL();
            if (!mieb_cli_dir("run", a, val))
                return -1;
            o->task_data = val;
        } else if (!strcmp(a, "--embeddings")) {
            NEED_VAL();
            if (!mieb_cli_dir("run", a, val))
                return -1;
            o->emb = val;
        } else if (!strcmp(a, "--export")) {
            NEED_VAL();
            o->export_dir = val;
        } else if (!strcmp(a, "--output-folder") || !strcmp(a, "--output_folder")) {
            NEED_VAL();
            if (!mieb_cli_out_dir("run", a, val))
                return -1;
            o->out = val;
        } else if (!strcmp(a, "--device")) {
            NEED_VAL();
            if (!device_ok(val))
                return -1;
            o->device = val;
        } else if (!strcmp(a, "--similarity")) {
            NEED_VAL();
            if (!similarity_ok(val))
                return -1;
            o->sim_override = val;
        } else if (!strcmp(a, "--overwrite-strategy")) {
            static const char *const ways[] = {"always", "never", "only-missing", NULL};
            int k;
            NEED_VAL();
            if (!mieb_cli_choice("run", a, val, ways, &k))
                return -1;
            o->overwrite = ways[k];
            o->overwrite_given = 1;
        } else if (!strcmp(a, "--mem-limit")) {
            NEED_VAL();
            if (!mieb_cli_size("run", a, val, MIN_MEM_LIMIT, &o->mem_limit))
                return -1;
        } else if (!strcmp(a, "--precision")) {
            static const char *const precs[] = {"fp32", "tf32", "bf16", NULL};
            int k;
            NEED_VAL();
            if (!mieb_cli_choice("run", a, val, precs, &k))
                return -1;
            o->precision = precs[k];
        } else if (!strcmp(a, "--kmeans")) {
            static const char *const modes[] = {"minibatch", "full", NULL};
            int k;
            NEED_VAL();
            if (!mieb_cli_choice("run", a, val, modes, &k))
                return -1;
            o->kmeans_full = k == 1;
        } else if (!strcmp(a, "--probe-device")) {
            static const char *const devs[] = {"auto", "cpu", NULL};
            int k;
            NEED_VAL();
            if (!mieb_cli_choice("run", a, val, devs, &k))
                return -1;
            o->probe_cpu = k == 1;
        } else if (!strcmp(a, "--threads")) {
            NEED_VAL();
            long long v;
            if (!mieb_cli_int("run", a, val, 0, 4096, &v)) /* atoi made "x" and "-3" mean all cores */
                return -1;
            o->threads = (int)v;
        } else if (!strcmp(a, "--shard-index") || !strcmp(a, "--num-shards")) { /* task sharding (issue 6) */
            NEED_VAL();
            long long v;
            if (!mieb_cli_int("run", a, val, 0, INT_MAX, &v))
                return -1;
            if (a[2] == 's') {
                o->shard_index = v;
                o->shard_index_set = 1;
            } else {
                if (v < 1) {
                    fprintf(stderr, "mieb-eval run: --num-shards must be at least 1\n");
                    return -1;
                }
                o->num_shards = v;
            }
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            o->verbose = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            o->quiet = 1;
        } else if (!strcmp(a, "--log-format")) {
            static const char *const fmts[] = {"text", "json", NULL}; /* enum mieb_log_format order */
            int k;
            NEED_VAL();
            if (!mieb_cli_choice("run", a, val, fmts, &k))
                return -1;
            o->log_format = (enum mieb_log_format)k;
        } else if (!strcmp(a, "--progress")) {
            static const char *const modes[] = {"auto", "tty", "plain", "off", NULL}; /* enum mieb_progress_mode order */
            int k;
            NEED_VAL();
            if (!mieb_cli_choice("run", a, val, modes, &k))
                return -1;
            o->progress = (enum mieb_progress_mode)k;
        } else if (!strcmp(a, "--corpus-parts") || !strcmp(a, "--corpus-part")) { /* corpus parts (issue 6) */
            NEED_VAL();
            long long v;
            if (!mieb_cli_int("run", a, val, 0, 99999, &v))
                return -1;
            if (!strcmp(a, "--corpus-part")) {
                o->corpus_part = v;
                o->corpus_part_set = 1;
            } else if (v < 1) {
                fprintf(stderr, "mieb-eval run: --corpus-parts must be at least 1\n");
                return -1;
            } else {
                o->corpus_parts = v;
            }
        } else if (!strcmp(a, "--partials-dir")) {
            NEED_VAL();
            if (!mieb_cli_out_dir("run", a, val))
                return -1;
            o->partials_dir = val;
        } else if (!strcmp(a, "--per-query")) {
            NEED_VAL();
            if (!mieb_cli_out_dir("run", a, val))
                return -1;
            o->per_query = val;
        } else if (!strcmp(a, "-b") || !strcmp(a, "--benchmark") || !strcmp(a, "--benchmarks")) {
            NEED_VAL();
            if (o->n_benchmarks < 16)
                o->benchmarks[o->n_benchmarks++] = val;
        } else if (!strcmp(a, "--task-types") || !strcmp(a, "--eval-splits") || !strcmp(a, "-l") ||
                   !strcmp(a, "--languages")) {
            /* one or more names up to the next option, as mteb's nargs="+" */
            int types = !strcmp(a, "--task-types"), langs = a[1] == 'l' || !strcmp(a, "--languages"), got = 0;
            int *n = types ? &o->n_task_types : langs ? &o->n_languages : &o->n_eval_splits;
            const char **dst = types ? o->task_types : langs ? o->languages : o->eval_splits;
            while (i + 1 < argc && argv[i + 1][0] != '-') {
                if (*n >= (types || langs ? 32 : 16)) {
                    fprintf(stderr, "mieb-eval run: too many values for %s\n", a);
                    return -1;
                }
                if (!argv[i + 1][0]) { /* names nothing: every task would be skipped, exit 0 */
                    mieb_cli_bad_value("run", a, "", types ? "a task type" : langs ? "a language" : "a split name");
                    return -1;
                }
                dst[(*n)++] = argv[++i];
                got++;
            }
            if (!got) {
                fprintf(stderr, "mieb-eval run: %s needs at least one value\n", a);
                return -1;
            }
        } else if (!strcmp(a, "-m") || !strcmp(a, "--model")) {
            NEED_VAL();
            o->model = val;
        } else if (!strcmp(a, "--model-revision")) {
            NEED_VAL();
            o->model_revision = val;
        } else if (!strcmp(a, "-t") || !strcmp(a, "--tasks")) {
            /* one or more task names up to the next option */
            int got = 0;
            while (i + 1 < argc && argv[i + 1][0] != '-') {
                if (o->n_tasks >= MAX_TASKS) {
                    fprintf(stderr, "mieb-eval run: too many tasks\n");
                    return -1;
                }
                o->tasks[o->n_tasks++] = argv[++i];
                got++;
            }
            if (!got) {
                fprintf(stderr, "mieb-eval run: %s needs at least one task name\n", a);
                return -1;
            }
        } else {
            fprintf(stderr, "mieb-eval run: unknown option '%s'\n", a);
            return -1;
        }
#undef NEED_VAL
    }
    if (resolve_export(o) != 0)
        return -1;
    if (!o->task_data || !o->emb || !o->out) {
        fprintf(stderr, "mieb-eval run: --task-data and --embeddings (or --export) and --output-folder are required\n");
        return -1;
    }
    if (!o->n_tasks && !o->n_benchmarks && !o->n_task_types) {
        fprintf(stderr, "mieb-eval run: name tasks with -t, a benchmark with -b, or task types with --task-types\n");
        return -1;
    }
    /* ---- task sharding (issue 6) ---- */
    if (o->shard_index_set && !o->num_shards) {
        fprintf(stderr, "mieb-eval run: --shard-index needs --num-shards\n");
        return -1;
    }
    if (o->num_shards && !o->shard_index_set) {
        fprintf(stderr, "mieb-eval run: --num-shards needs --shard-index\n");
        return -1;
    }
    if (o->num_shards && o->shard_index >= o->num_shards) {
        fprintf(stderr, "mieb-eval run: --shard-index %ld out of range: 0 <= I < --num-shards (%ld)\n",
                o->shard_index, o->num_shards);
        return -1;
    }
    /* ---- end of task sharding ---- */
    if ((o->corpus_parts || o->corpus_part_set || o->partials_dir) &&
        (!o->corpus_parts || !o->corpus_part_set || !o->partials_dir)) {
        fprintf(stderr, "mieb-eval run: --corpus-parts, --corpus-part and --partials-dir go together\n");
        return -1;
    }
    if (o->corpus_parts && o->corpus_part >= o->corpus_parts) {
        fprintf(stderr, "mieb-eval run: --corpus-part %ld out of range: 0 <= I < --corpus-parts (%ld)\n",
                o->corpus_part, o->corpus_parts);
        return -1;
    }
    if (o->verbose && o->quiet) {
        fprintf(stderr, "mieb-eval run: -v and -q exclude each other\n");
        return -1;
    }
    return 0;
}

/* Score every split and subset of one task and write its result file. */
static mieb_status score_task(const struct run_opts *o, const struct mieb_run_ctx *rc,
                              const struct mieb_task *task, const char *results_dir)
{
    char path[PATH_MAX];
    struct mieb_taskdata *td = NULL;
    double t0 = mieb_now();
    mieb_status st;
    cJSON *scores = NULL, *phases = NULL;

    mieb_family_score_fn score_subset = mieb_family_driver(task->family);
    if (!score_subset)
        return mieb_fail(MIEB_ERR_UNSUPPORTED, "task %s: type %s is not supported yet by this mieb-eval",
                         task->name, task->type);
    if (snprintf(path, sizeof path, "%s/%s.h5", o->task_data, task->name) >= (int)sizeof path)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "path too long");
    st = mieb_taskdata_open(path, task->name, &td);
    if (st != MIEB_OK)
        return st;
    scores = cJSON_CreateObject();
    phases = cJSON_CreateArray();
    mieb_results_add_phase(phases, "Data loading", 0.0, mieb_now() - t0, "", "");
    for (int s = 0; s < task->n_splits && st == MIEB_OK; s++) {
        const char *split = task->splits[s];
        cJSON *list = cJSON_AddArrayToObject(scores, split);
        for (int h = 0; h < task->n_subsets && st == MIEB_OK; h++) {
            const char *subset = task->subsets[h];
            double ts = mieb_now() - t0;
            if (interrupted) {
                st = mieb_fail(MIEB_ERR_INTERRUPTED, "interrupted by signal %d", (int)interrupted);
                break;
            }
            if (!mieb_taskdata_has_group(td, split, subset)) {
                st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: group /%s/%s is missing (task %s evaluates split %s, subset %s)",
                               path, split, subset, task->name, split, subset);
                break;
            }
            mieb_progress_subset(split, subset);
            cJSON *sub = cJSON_CreateObject();
            cJSON_AddItemToArray(list, sub);
            struct mieb_stage_times times = {0};
            struct mieb_run_ctx rcs = *rc;
            rcs.times = &times;
            st = score_subset(&rcs, task, td, split, subset, sub);
            if (st != MIEB_OK)
                break;
            if ((st = mieb_results_finish_subset(sub, task, subset, o->precision)) != MIEB_OK)
                break;
            double te = mieb_now() - t0;
            mieb_results_add_phase(phases, "Evaluation", ts, te, split, subset);
            /* stage totals, laid end to end inside the subset's evaluation window */
            const struct { const char *name; double secs; } stages[] = {
                {"Stage: waiting for reads", times.read_wait},
                {"Stage: similarity and top-k", times.similarity},
                {"Stage: merge and heap", times.merge},
                {"Stage: metrics", times.metrics},
            };
            double at = ts;
            for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++) {
                mieb_results_add_phase(phases, stages[i].name, at, at + stages[i].secs, split, subset);
                at += stages[i].secs;
            }
            MIEB_LOGD("%s %s/%s: read wait %.3f s, similarity %.3f s, merge %.3f s, metrics %.3f s, total %.3f s",
                      task->name, split, subset, times.read_wait, times.similarity, times.merge, times.metrics,
                      te - ts);
            mieb_progress_unit_done();
        }
    }
    if (st == MIEB_OK) {
        struct mieb_task_result r = {
            .dataset_revision = mieb_taskdata_revision(td)[0] ? mieb_taskdata_revision(td) : task->revision,
            .task_name = task->name,
            .scores = scores,
            .evaluation_time = mieb_now() - t0,
            .date = mieb_results_date_now(),
            .phases = phases,
            .round_fn = mieb_family_round_fn(task->family),
        };
        st = mieb_results_write(results_dir, &r);
    }
    cJSON_Delete(scores);
    cJSON_Delete(phases);
    mieb_taskdata_close(td);
    return st;
}

/* ---- aggregate tasks (issue 4): scored from their sub-task, see families/sts_aggregate.c ---- */
static mieb_status score_aggregate(const struct mieb_run_ctx *rc, const struct mieb_registry *reg,
                                   const struct run_opts *o, const struct mieb_task *task, const char *results_dir)
{
    double t0 = mieb_now();
    cJSON *scores = NULL;
    MIEB_TRY(mieb_aggregate_score(rc, reg, task, o->task_data, &scores));
    struct mieb_task_result r = {
        .dataset_revision = MIEB_AGGREGATE_REVISION,
        .task_name = task->name,
        .scores = scores,
        .evaluation_time = mieb_now() - t0,
        .date = mieb_results_date_now(),
        .phases = NULL,       /* mteb's combined result has no evaluation_phases */
        .round_fn = mieb_aggregate_round,
        .kg_co2_nan = true,
    };
    mieb_status st = mieb_results_write(results_dir, &r);
    cJSON_Delete(scores);
    return st;
}
/* ---- end of aggregate tasks ---- */

/*
 * --overwrite-strategy never|only-missing: MIEB_OK when the task's result is there and whole
 * (io/results_check.h: this task's, every split and subset this run would write), so the
 * task is skipped; MIEB_ERR_NOT_FOUND when it is to be scored: absent, or not a result and
 * now set aside with a warning. Any other status (an I/O error, out of memory) leaves the
 * file as it is and the task unscored.
 */
static mieb_status result_present(const struct mieb_task *t, const char *path)
{
    static const char *const aggregate_subsets[] = {"default"}; /* sts_aggregate.c writes only it */
    bool agg = mieb_aggregate_subtask(t->name) != NULL;
    char why[1024], aside[PATH_MAX + 64];
    mieb_status st = mieb_result_check(path, t->name, t->splits, t->n_splits, agg ? aggregate_subsets : t->subsets,
                                       agg ? 1 : t->n_subsets);
    if (st != MIEB_ERR_BAD_DATA && st != MIEB_ERR_TOO_LARGE)
        return st;
    snprintf(why, sizeof why, "%s", mieb_last_error());
    MIEB_TRY(mieb_set_aside(path, aside, sizeof aside));
    MIEB_LOGW("%s: the file there is not a whole result of the task (%s); kept as %s, scoring the task again",
              t->name, why, aside);
    return MIEB_ERR_NOT_FOUND;
}

/* Units of progress of a task: its (split, subset) pairs; an aggregate counts one. */
/* The task-data file a task reads: its own, or an aggregate's sub-task's. */
static void task_data_file(const struct run_opts *o, const struct mieb_task *t, char *p, size_t n)
{
    const char *data_of = mieb_aggregate_subtask(t->name);
    snprintf(p, n, "%s/%s.h5", o->task_data, data_of ? data_of : t->name);
}

/* A benchmark or --task-types run scores what is present: 1 when `t` can be scored here,
   else 0 after saying why it is skipped. */
static int scorable_here(const struct run_opts *o, const struct mieb_task *t)
{
    char p[PATH_MAX + 256];
    task_data_file(o, t, p, sizeof p);
    if (!mieb_file_exists(p)) {
        MIEB_LOGW("skipping %s: no task-data file %s", t->name, p);
        return 0;
    }
    if (!mieb_family_driver(t->family)) {
        MIEB_LOGW("skipping %s: type %s is not supported yet", t->name, t->type);
        return 0;
    }
    return 1;
}

/* --eval-splits: keep, in each registry task, only the listed splits (in the task's order). */
static void restrict_splits(const struct run_opts *o, struct mieb_registry *reg)
{
    for (int i = 0; i < reg->n_tasks; i++) {
        struct mieb_task *t = &reg->tasks[i];
        int kept = 0;
        for (int s = 0; s < t->n_splits; s++)
            for (int e = 0; e < o->n_eval_splits; e++)
                if (!strcmp(t->splits[s], o->eval_splits[e])) {
                    t->splits[kept++] = t->splits[s];
                    break;
                }
        t->n_splits = kept;
    }
}

/* -l/--languages: does a language of the subset match one asked for (mteb: "eng" matches "eng-Latn")? */
static bool language_wanted(const struct run_opts *o, const struct mieb_task *t, const char *subset)
{
    cJSON *langs = mieb_task_languages(t, subset), *l;
    bool hit = false;
    cJSON_ArrayForEach(l, langs)
    {
        if (!cJSON_IsString(l))
            continue;
        for (int i = 0; i < o->n_languages && !hit; i++) {
            size_t n = strlen(o->languages[i]);
            hit = !strcmp(l->valuestring, o->languages[i]) ||
                  (!strncmp(l->valuestring, o->languages[i], n) && l->valuestring[n] == '-');
        }
    }
    cJSON_Delete(langs);
    return hit;
}

/* -l/--languages: keep, in each registry task, only the subsets in those languages. */
static void restrict_languages(const struct run_opts *o, struct mieb_registry *reg)
{
    for (int i = 0; i < reg->n_tasks; i++) {
        struct mieb_task *t = &reg->tasks[i];
        int kept = 0;
        for (int s = 0; s < t->n_subsets; s++)
            if (language_wanted(o, t, t->subsets[s]))
                t->subsets[kept++] = t->subsets[s];
        t->n_subsets = kept;
    }
}

/* --task-types: a misspelt type would select nothing and exit 0 */
static bool type_known(const struct mieb_registry *reg, const char *type)
{
    for (int i = 0; i < reg->n_tasks; i++)
        if (!strcmp(reg->tasks[i].type, type))
            return true;
    return false;
}

static int type_wanted(const struct run_opts *o, const struct mieb_task *t)
{
    for (int i = 0; i < o->n_task_types; i++)
        if (!strcmp(o->task_types[i], t->type))
            return 1;
    return o->n_task_types == 0;
}

/* The files a task read, fingerprinted in the run manifest (plan/manifest.h). */
static void manifest_inputs(struct mieb_manifest *man, const struct run_opts *o, const struct mieb_task *t)
{
    char p[PATH_MAX + 256];
    task_data_file(o, t, p, sizeof p);
    mieb_manifest_task(man, t->name, p, o->emb);
}

/* The run's closing summary: counts, each task's main score, each failure's first error, a hint
   to inspect when inputs are missing; with --log-format json one record. Then the manifest. */
static void closing_summary(const struct run_opts *o, struct mieb_outcomes *oc, struct mieb_manifest *man,
                            const char *results_dir)
{
    static const char *const kind[] = {"scored", "skipped", "FAILED"};
    int missing = 0;
    /* -q: nothing on success, only the failures otherwise; json logs: one record, text: a table */
    if ((!o->quiet || oc->counts[MIEB_OUTCOME_FAILED]) &&
        !mieb_cli_record("summary", "summary", mieb_outcomes_json(oc, results_dir))) {
        mieb_cli_say(MIEB_LOG_INFO, "mieb-eval: ", "summary: %d scored, %d skipped, %d failed; results in %s",
                     oc->counts[MIEB_OUTCOME_SCORED], oc->counts[MIEB_OUTCOME_SKIPPED],
                     oc->counts[MIEB_OUTCOME_FAILED], results_dir);
        for (int i = 0; i < oc->n; i++) {
            const struct mieb_outcome *e = &oc->v[i];
            char score[32] = "-";
            if (!isnan(e->main_score))
                snprintf(score, sizeof score, "%.4f", e->main_score);
            if (e->kind == MIEB_OUTCOME_FAILED || !o->quiet)
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

static long task_units(const struct mieb_task *t)
{
    if (mieb_aggregate_subtask(t->name))
        return 1;
    long n = (long)t->n_splits * (long)t->n_subsets;
    return n > 0 ? n : 1;
}

int mieb_cmd_run(int argc, char **argv)
{
    struct run_opts o;
    struct mieb_registry reg = {0};
    struct mieb_model_meta meta;
    struct mieb_backend *be = NULL;
    struct mieb_backend_opts bo = {0};
    char results_dir[PATH_MAX];
    const struct mieb_task *todo[MAX_TASKS];
    int n_todo = 0, failed = 0, rc_exit = MIEB_EXIT_OK;
    mieb_status st;

    int pa = parse_args(argc, argv, &o);
    if (pa != 0) {
        if (pa < 0)
            mieb_cli_brief_usage("run", run_usage);
        return pa > 0 ? MIEB_EXIT_OK : MIEB_EXIT_USAGE;
    }
    mieb_cli_log_init(o.log_format, o.verbose ? MIEB_LOG_DEBUG : o.quiet ? MIEB_LOG_WARN : MIEB_LOG_INFO);
    if (!o.mem_limit) { /* half of RAM, of the cgroup's limit or of Slurm's allocation (mem_default.h) */
        long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        char why[512];
        o.mem_limit = mieb_mem_default(NULL, pages > 0 && psz > 0 ? (size_t)pages * (size_t)psz : 0, why, sizeof why);
        MIEB_LOGD("--mem-limit default: %s", why);
    }
    if ((st = mieb_registry_load_default(&reg)) != MIEB_OK) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval: error: ", "%s", mieb_last_error());
        return MIEB_EXIT_FATAL;
    }
    for (int i = 0; i < o.n_task_types; i++)
        if (!type_known(&reg, o.task_types[i])) {
            mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval run: ", "bad --task-types '%s' (no registry task has this type)",
                         o.task_types[i]);
            mieb_registry_free(&reg);
            return MIEB_EXIT_USAGE;
        }
    if (o.n_eval_splits)
        restrict_splits(&o, &reg);
    if (o.n_languages)
        restrict_languages(&o, &reg);
    for (int i = 0; i < o.n_tasks; i++) {
        const struct mieb_task *t = mieb_registry_find(&reg, o.tasks[i]);
        if (!t) {
            char msg[512];
            mieb_unknown_task_msg(&reg, o.tasks[i], msg, sizeof msg);
            mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval run: ", "%s", msg);
            mieb_registry_free(&reg);
            return MIEB_EXIT_USAGE;
        }
        todo[n_todo++] = t;
    }
    for (int b = 0; b < o.n_benchmarks; b++) {
        const struct mieb_benchmark *bm = mieb_registry_benchmark(&reg, o.benchmarks[b]);
        if (!bm) {
            mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval run: ", "%s", mieb_last_error());
            mieb_registry_free(&reg);
            return MIEB_EXIT_USAGE;
        }
        /* mteb's task order of the benchmark */
        for (int i = 0; i < bm->n_tasks && n_todo < MAX_TASKS; i++) {
            const struct mieb_task *t = bm->tasks[i];
            int dup = 0;
            for (int j = 0; j < n_todo; j++)
                dup |= todo[j] == t;
            if (dup)
                continue;
            /* a benchmark run scores what is present and says what it skips */
            if (type_wanted(&o, t) && scorable_here(&o, t))
                todo[n_todo++] = t;
        }
    }
    /* --task-types alone: every registry task of those types that is present */
    for (int i = 0; !o.n_tasks && !o.n_benchmarks && i < reg.n_tasks && n_todo < MAX_TASKS; i++)
        if (type_wanted(&o, &reg.tasks[i]) && scorable_here(&o, &reg.tasks[i]))
            todo[n_todo++] = &reg.tasks[i];
    /* --task-types with -t: keep the named tasks of those types; --eval-splits: drop tasks left without a split */
    {
        int kept = 0;
        for (int j = 0; j < n_todo; j++) {
            if (!type_wanted(&o, todo[j])) {
                MIEB_LOGI("skipping %s: type %s is not in --task-types", todo[j]->name, todo[j]->type);
                continue;
            }
            if (o.n_eval_splits && todo[j]->n_splits == 0) {
                MIEB_LOGW("skipping %s: none of its splits is in --eval-splits", todo[j]->name);
                continue;
            }
            if (o.n_languages && todo[j]->n_subsets == 0) {
                MIEB_LOGI("skipping %s: none of its subsets is in --languages", todo[j]->name);
                continue;
            }
            todo[kept++] = todo[j];
        }
        n_todo = kept;
    }
    /* ---- task sharding: the final list split by cost (plan/task_shards.h) ---- */
    if (o.num_shards) {
        int kept = 0, *shard = malloc(((size_t)n_todo + 1) * sizeof *shard);
        if (!shard || mieb_shard_assign(&reg, todo, n_todo, (int)o.num_shards, shard) != MIEB_OK) {
            free(shard);
            mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval: error: ", "%s", "out of memory for the task shards");
            mieb_registry_free(&reg);
            return MIEB_EXIT_FATAL;
        }
        for (int j = 0; j < n_todo; j++)
            if (shard[j] == o.shard_index)
                todo[kept++] = todo[j];
        free(shard);
        MIEB_LOGI("shard %ld of %ld: %d of %d task(s)", o.shard_index, o.num_shards, kept, n_todo);
        n_todo = kept;
    }
    /* ---- end of task sharding ---- */
    if ((st = mieb_model_meta_load(o.emb, &meta)) != MIEB_OK) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval: error: ", "%s", mieb_last_error());
        mieb_registry_free(&reg);
        return MIEB_EXIT_FATAL;
    }
    if ((o.model && strcmp(o.model, meta.name)) || (o.model_revision && strcmp(o.model_revision, meta.revision))) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval run: ", "%s: the embeddings are of model %s revision %s, not %s %s",
                     meta.path, meta.name, meta.revision, o.model ? o.model : meta.name,
                     o.model_revision ? o.model_revision : meta.revision);
        mieb_model_meta_free(&meta);
        mieb_registry_free(&reg);
        return MIEB_EXIT_USAGE;
    }
    if (o.sim_override && (st = mieb_sim_parse(o.sim_override, &meta.sim)) != MIEB_OK) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval run: ", "--similarity: %s", mieb_last_error());
        mieb_model_meta_free(&meta);
        mieb_registry_free(&reg);
        return MIEB_EXIT_USAGE;
    }
    bo.mem_limit = o.mem_limit;
    bo.n_threads = o.threads;
    bo.precision = !strcmp(o.precision, "tf32") ? MIEB_PREC_TF32 : !strcmp(o.precision, "bf16") ? MIEB_PREC_BF16 : MIEB_PREC_FP32;
    if ((st = mieb_backend_init(o.device, &bo, &be)) != MIEB_OK) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval: error: ", "%s", mieb_last_error());
        mieb_model_meta_free(&meta);
        mieb_registry_free(&reg);
        return st == MIEB_ERR_NO_DEVICE ? MIEB_EXIT_NO_DEVICE : MIEB_EXIT_USAGE;
    }
    if (bo.precision != MIEB_PREC_FP32 && !strcmp(be->iface.name, "cpu")) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval run: ",
                     "--precision %s needs the CUDA backend; the CPU backend computes in fp32", o.precision);
        mieb_backend_free(be);
        mieb_model_meta_free(&meta);
        mieb_registry_free(&reg);
        return MIEB_EXIT_USAGE;
    }
    if ((st = mieb_results_dir(o.out, meta.name, meta.revision, results_dir, sizeof results_dir)) != MIEB_OK ||
        (st = mieb_results_write_model_meta(results_dir, meta.text, meta.text_len)) != MIEB_OK) {
        mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval: error: ", "%s", mieb_last_error());
        mieb_model_meta_free(&meta);
        mieb_backend_free(be);
        mieb_registry_free(&reg);
        return MIEB_EXIT_FATAL;
    }
    mieb_model_meta_free(&meta); /* copied: only the parsed fields are used from here */
    /* temporaries of an earlier run on this host that was killed (tmpfiles.h) */
    mieb_clean_stale_tmp(results_dir, 0);
    if (o.per_query)
        mieb_clean_stale_tmp(o.per_query, 3); /* <dir>/<task>/<split>/<subset>/ */
    if (o.partials_dir)
        mieb_clean_stale_tmp(o.partials_dir, 3);
    /* the watchdog of a stuck run removes this run's temporaries there (core/stop.h) */
    mieb_stop_watch_tmp(results_dir, 0);
    if (o.per_query)
        mieb_stop_watch_tmp(o.per_query, 3);
    if (o.partials_dir)
        mieb_stop_watch_tmp(o.partials_dir, 3);
    if (mieb_stop_install(&interrupted) != MIEB_OK) /* SIGUSR1: pre-emption notice (MIEB_EXIT_PREEMPTED) */
        MIEB_LOGW("%s; a run stuck after SIGINT/SIGTERM will not be ended", mieb_last_error());
    struct mieb_run_ctx rc = {.emb_dir = o.emb, .be = be, .sim = meta.sim, .mem_limit = o.mem_limit,
                              .kmeans_full = o.kmeans_full, .probe_cpu = o.probe_cpu, .n_threads = o.threads, .interrupted = &interrupted};
    rc.per_query_dir = o.per_query;
    MIEB_LOGI("scoring %d task(s) for %s on %s (similarity %s)", n_todo, meta.name, be->iface.name,
              mieb_sim_name(meta.sim));
    long total_units = 0;
    for (int i = 0; i < n_todo; i++)
        total_units += task_units(todo[i]); /* --per-query: every family writes its files */
    mieb_progress_start(o.progress, n_todo, total_units, 0.0);
    struct mieb_outcomes outcomes = {0};
    struct mieb_manifest man;
    if (mieb_manifest_begin(&man, argc, argv, be->iface.name, o.precision, meta.name, meta.revision) != MIEB_OK)
        MIEB_LOGW("no run manifest: %s", mieb_last_error());
    /* corpus parts (issue 6): retrieval tasks write this part's partials, host/cluster/corpus_parts.h */
    struct mieb_part_opts part = {.dir = o.partials_dir, .part = o.corpus_part, .n_parts = o.corpus_parts,
                                  .task_data = o.task_data, .skip_existing = strcmp(o.overwrite, "always") != 0,
                                  .meta = &meta, .precision = o.precision};
    for (int i = 0; i < n_todo && !interrupted; i++) {
        char p[PATH_MAX + 256];
        bool as_part = o.corpus_parts && todo[i]->family == MIEB_FAMILY_RETRIEVAL;
        mieb_progress_task_begin(i, todo[i]->name);
        snprintf(p, sizeof p, "%s/%s.json", results_dir, todo[i]->name);
        if (o.corpus_parts && !as_part && o.corpus_part != 0) {
            MIEB_LOGI("%s: not a retrieval task, scored by corpus part 0 only: skipped", todo[i]->name);
            mieb_outcome_add(&outcomes, todo[i]->name, MIEB_OUTCOME_SKIPPED, 0.0, "scored by corpus part 0", 0);
            mieb_progress_task_end(todo[i]->name, "skipped", task_units(todo[i]));
            continue;
        }
        mieb_clear_error();
        st = !as_part && strcmp(o.overwrite, "always") ? result_present(todo[i], p) : MIEB_ERR_NOT_FOUND;
        if (st == MIEB_OK) {
            MIEB_LOGI("%s: result exists, skipped (--overwrite-strategy %s)", todo[i]->name, o.overwrite);
            mieb_outcome_add(&outcomes, todo[i]->name, MIEB_OUTCOME_SKIPPED, 0.0,
                             o.overwrite_given ? "result exists" : "result exists (--overwrite-strategy always rescores)",
                             0);
            mieb_outcome_score_from(&outcomes, p);
            mieb_progress_task_end(todo[i]->name, "skipped", task_units(todo[i]));
            continue;
        }
        double t0 = mieb_now();
        if (st == MIEB_ERR_NOT_FOUND) {
            manifest_inputs(&man, &o, todo[i]); /* fingerprinted before the task reads them */
            mieb_clear_error();
            st = as_part ? mieb_corpus_part_task(&rc, todo[i], &part)
                 : mieb_aggregate_subtask(todo[i]->name) ? score_aggregate(&rc, &reg, &o, todo[i], results_dir)
                                                         : score_task(&o, &rc, todo[i], results_dir);
        }
        if (st == MIEB_ERR_INTERRUPTED || (st != MIEB_OK && interrupted))
            break; /* a read cut short by the signal (EINTR) is the stop, not a bad input */
        if (st != MIEB_OK) {
            mieb_cli_say(MIEB_LOG_ERROR, "mieb-eval: error: ", "task %s not scored (%s): %s", todo[i]->name,
                         mieb_status_str(st), mieb_last_error());
            mieb_outcome_add(&outcomes, todo[i]->name, MIEB_OUTCOME_FAILED, mieb_now() - t0, mieb_last_error(),
                             st == MIEB_ERR_NOT_FOUND);
            failed++;
            if (st == MIEB_ERR_CUDA || st == MIEB_ERR_CUBLAS)
                rc_exit = MIEB_EXIT_FATAL;
            mieb_progress_task_end(todo[i]->name, "failed", task_units(todo[i]));
            continue;
        }
        mieb_cli_log_context(todo[i]->name, NULL, NULL); /* task-level line */
        MIEB_LOGD("%s: scored in %.2f s -> %s", todo[i]->name, mieb_now() - t0, as_part ? o.partials_dir : p);
        mieb_outcome_add(&outcomes, todo[i]->name, MIEB_OUTCOME_SCORED, mieb_now() - t0, as_part ? "corpus part" : NULL,
                         0);
        if (!as_part)
            mieb_outcome_score_from(&outcomes, p);
        mieb_progress_task_end(todo[i]->name, "scored", task_units(todo[i]));
    }
    mieb_progress_stop();
    closing_summary(&o, &outcomes, &man, results_dir);
    if (interrupted == SIGUSR1) {
        mieb_cli_say(MIEB_LOG_WARN, "mieb-eval: ",
                     "pre-empted (SIGUSR1); finished results are kept, rerun the same command with "
                     "--overwrite-strategy only-missing to resume");
        rc_exit = MIEB_EXIT_PREEMPTED;
    } else if (interrupted) {
        mieb_cli_say(MIEB_LOG_WARN, "mieb-eval: ",
                     "interrupted; finished results are kept, rerun with --overwrite-strategy only-missing to resume");
        rc_exit = MIEB_EXIT_INTERRUPTED;
    } else if (failed && rc_exit == MIEB_EXIT_OK) {
        rc_exit = MIEB_EXIT_TASK_FAILED;
    }
    printf("%s\n", results_dir);
    mieb_outcomes_free(&outcomes);
    mieb_manifest_free(&man);
    mieb_backend_free(be);
    mieb_registry_free(&reg);
    return rc_exit;
}
