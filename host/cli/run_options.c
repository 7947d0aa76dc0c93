/* run_options.c - the command line of `mieb-eval run`: its option table and checks (run_options.h). */
#include "run_options.h"

#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "../config/model_meta.h"
#include "../core/escape.h"
#include "../core/fileutil.h"

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
        if (o->s.task_data || o->s.embeddings) {
            mieb_fprintf_esc(stderr, "mieb-eval run: --export DIR stands for --task-data DIR/task-data --embeddings "
                            "DIR/embeddings: give one or the other\n");
            return -1;
        }
        if (snprintf(o->export_paths[0], PATH_MAX, "%s/task-data", o->export_dir) >= PATH_MAX ||
            snprintf(o->export_paths[1], PATH_MAX, "%s/embeddings", o->export_dir) >= PATH_MAX) {
            mieb_fprintf_esc(stderr, "mieb-eval run: --export: path too long\n");
            return -1;
        }
        o->s.task_data = o->export_paths[0];
        o->s.embeddings = o->export_paths[1];
        return 0;
    }
    const char *opt[2] = {"--task-data", "--embeddings"}, *dir[2] = {o->s.task_data, o->s.embeddings};
    for (int k = 0; k < 2; k++)
        if (dir[k] && is_export_dir(dir[k])) {
            mieb_fprintf_esc(stderr, "mieb-eval run: %s %s holds task-data/ and embeddings/: it is an export folder; "
                            "use --export %s (or --task-data %s/task-data --embeddings %s/embeddings)\n",
                    opt[k], dir[k], dir[k], dir[k], dir[k]);
            return -1;
        }
    return 0;
}

/* The smallest --mem-limit: one page. Tests and tiny corpora use a few KiB to force many
   blocks; below that a value is a mistake such as "0.4" for 0.4G, which used to become 0
   bytes and so silently half of RAM. */
#define MIN_MEM_LIMIT ((size_t)4096)

/* --device: auto, cpu, cuda or cuda:N (N a whole number), before any backend starts. */
static bool device_ok(const char *cmd, const char *opt, const char *val, void *field)
{
    long long n;
    if (!strcmp(val, "auto") || !strcmp(val, "cpu") || !strcmp(val, "cuda") ||
        (!strncmp(val, "cuda:", 5) && mieb_cli_parse_i64(val + 5, 0, INT_MAX, &n))) {
        *(const char **)field = val;
        return true;
    }
    mieb_cli_bad_value(cmd, opt, val, "auto, cpu, cuda or cuda:N");
    return false;
}

/* --similarity: what model_meta.json's similarity_fn_name may say, but never empty
   (mieb_sim_parse reads an empty name as cosine). */
static bool similarity_ok(const char *cmd, const char *opt, const char *val, void *field)
{
    enum mieb_sim sim;
    if (val[0] && mieb_sim_parse(val, &sim) == MIEB_OK) {
        *(const char **)field = val;
        return true;
    }
    mieb_cli_bad_value(cmd, opt, val, "cosine, dot or MaxSim");
    return false;
}

/* A count of processes or parts: a whole number from 1 to hi into the long *field; 0 is
   said apart (it would make every index out of range). */
static bool count_ok(const char *cmd, const char *opt, const char *val, void *field, long long hi)
{
    long long v;
    if (!mieb_cli_int(cmd, opt, val, 0, hi, &v))
        return false;
    if (v < 1) {
        mieb_fprintf_esc(stderr, "mieb-eval %s: %s must be at least 1\n", cmd, opt);
        return false;
    }
    *(long *)field = (long)v;
    return true;
}

/* --num-shards K: the processes the task list is split over. */
static bool shards_ok(const char *cmd, const char *opt, const char *val, void *field)
{
    return count_ok(cmd, opt, val, field, INT_MAX);
}

/* --corpus-parts K: the parts a retrieval corpus is split into (part files are numbered in
   five digits). */
static bool parts_ok(const char *cmd, const char *opt, const char *val, void *field)
{
    return count_ok(cmd, opt, val, field, 99999);
}


static const char *const ways[] = {"always", "never", "only-missing", NULL};
static const char *const precisions[] = {"fp32", "tf32", "bf16", NULL};
static const char *const kmeans_modes[] = {"minibatch", "full", NULL}; /* kmeans_full: the index */
static const char *const probe_devices[] = {"auto", "cpu", NULL};      /* probe_cpu: the index */
static const char *const progress_modes[] = {"auto", "tty", "plain", "off", NULL}; /* enum mieb_progress_mode */
/* a CHOICE stores its index in an int: --progress's field must be one */
_Static_assert(sizeof(enum mieb_progress_mode) == sizeof(int), "--progress is stored as an int");

#define RO(f) offsetof(struct run_opts, f)
/* In the order of --help. */
static const struct mieb_cli_opt run_table[] = {
    {"--task-data", .kind = MIEB_OPT_IN_DIR, .at = RO(s.task_data), .help = "  --task-data DIR      folder of <TaskName>.h5 ground-truth files\n"},
    {"--embeddings", .kind = MIEB_OPT_IN_DIR, .at = RO(s.embeddings), .help = "  --embeddings DIR     folder with model_meta.json and <TaskName>/<split>/<subset>/<role>.h5\n"},
    {"--export", .kind = MIEB_OPT_STRING, .at = RO(export_dir), .help = "  --export DIR         mieb-export's output folder: --task-data DIR/task-data --embeddings DIR/embeddings\n"}, /* resolve_export checks it */
    {"--tasks", "-t", .kind = MIEB_OPT_LIST, .at = RO(tasks), .count_at = RO(s.select.n_tasks), .cap = MAX_TASKS,
     .flags = MIEB_OPT_NEED_ONE | MIEB_OPT_OF_TASKS, .help = "  -t, --tasks TASK...  tasks to score (names as in mteb)\n"},
    {"--benchmark", "-b", "--benchmarks", .kind = MIEB_OPT_EACH, .at = RO(benchmarks), .count_at = RO(s.select.n_benchmarks),
     .cap = MAX_BENCHMARKS, .help = "  -b, --benchmark B    every task of a benchmark: MIEB(eng), MIEB(Multilingual), MIEB(lite), MIEB(Img)\n"},
    {"--task-types", .kind = MIEB_OPT_LIST, .at = RO(task_types), .count_at = RO(s.select.n_task_types), .cap = 32,
     .empty = "a task type", .flags = MIEB_OPT_NEED_ONE, .help = "  --task-types T...    keep only tasks of these types (e.g. Any2AnyRetrieval ImageClustering); alone,\n"
             "                       every registry task of those types whose task data is present\n"},
    {"--eval-splits", .kind = MIEB_OPT_LIST, .at = RO(eval_splits), .count_at = RO(s.select.n_eval_splits), .cap = 16,
     .empty = "a split name", .flags = MIEB_OPT_NEED_ONE, .help = "  --eval-splits S...   score only these splits (mteb's eval_splits); a task with none is skipped\n"},
    {"--languages", "-l", .kind = MIEB_OPT_LIST, .at = RO(languages), .count_at = RO(s.select.n_languages), .cap = 32,
     .empty = "a language", .flags = MIEB_OPT_NEED_ONE, .help = "  -l, --languages L... score only the subsets in these languages, as mteb's languages= (ISO 639-3\n"
             "                       such as eng, or with the script, eng-Latn); a task with none is skipped\n"},
    {"--model", "-m", .kind = MIEB_OPT_STRING, .at = RO(s.model), .help = "  -m, --model NAME     check that model_meta.json names this model (mteb's -m); refuse otherwise\n"},
    {"--model-revision", .kind = MIEB_OPT_STRING, .at = RO(s.model_revision), .help = "  --model-revision R   check the model revision likewise\n"},
    {"--output-folder", .kind = MIEB_OPT_OUT_DIR, .at = RO(s.output_folder), .help = "  --output-folder DIR  results go to DIR/results/<org>__<model>/<revision>/<TaskName>.json\n"},
    {"--device", .kind = MIEB_OPT_CHECK, .at = RO(s.device), .check = device_ok, .def = "auto", .help = "  --device D           auto (CUDA if usable, else CPU), cpu, cuda, cuda:N   [auto]\n"},
    {"--mem-limit", .kind = MIEB_OPT_SIZE, .at = RO(s.mem_limit), .lo = MIN_MEM_LIMIT, .help = "  --mem-limit SIZE     memory for embeddings and search state: a number with an optional K, M, G\n"
             "                       or T suffix (powers of 1024), e.g. 512M, 8G, 1.5G; at least 4K [half of the\n"
             "                       smallest of RAM, this process's cgroup memory limit (v2 memory.max, v1\n"
             "                       memory.limit_in_bytes) and Slurm's SLURM_MEM_PER_NODE or SLURM_MEM_PER_CPU\n"
             "                       x CPUs; -v logs which]\n"},
    {"--similarity", .kind = MIEB_OPT_CHECK, .at = RO(s.similarity), .check = similarity_ok, .help = "  --similarity S       override model_meta.json's similarity_fn_name\n"},
    /* unset: only-missing, mteb's default (a rerun resumes), and the summary says so of a skip */
    {"--overwrite-strategy", .kind = MIEB_OPT_CHOICE, .at = RO(s.overwrite), .choices = ways,
     .flags = MIEB_OPT_AS_STRING, .help = "  --overwrite-strategy always | never | only-missing (skip tasks whose result is there and whole;\n"
             "                       a file that is not a result of the task, with every split and subset\n"
             "                       this run writes, is kept as <Task>.json.bad-<UTC time> and the task\n"
             "                       scored again) [only-missing, as mteb: a rerun resumes]\n"},
    {"--threads", .kind = MIEB_OPT_INT, .at = RO(s.threads), .width = sizeof(int), .lo = 0, .hi = 4096,
     .help = "  --threads N          CPU threads; 0 = the CPUs this process may use [0]\n"}, /* atoi made "x" and "-3" mean all cores */
    {"--precision", .kind = MIEB_OPT_CHOICE, .at = RO(s.precision), .choices = precisions, .flags = MIEB_OPT_AS_STRING,
     .def = "fp32", .help = "  --precision P        similarity arithmetic: fp32 (exact, default); tf32 or bf16 on CUDA only,\n"
             "                       faster, recorded in each result as similarity_precision\n"},
    {"--kmeans", .kind = MIEB_OPT_CHOICE, .at = RO(s.kmeans_full), .choices = kmeans_modes, .help = "  --kmeans M           ImageClustering: minibatch (mteb's MiniBatchKMeans, default) or full\n"
             "                       (full-batch Lloyd, faster; recorded in each result as kmeans_mode)\n"},
    {"--probe-device", .kind = MIEB_OPT_CHOICE, .at = RO(s.probe_cpu), .choices = probe_devices, .help = "  --probe-device D     ImageClassification linear probes: auto (the --device backend: on CUDA the\n"
             "                       experiments are fitted in lockstep on the GPU, equal to sklearn within\n"
             "                       float32 rounding) or cpu (sklearn's bits, on the CPU threads)   [auto]\n"},
    {"--per-query", .kind = MIEB_OPT_OUT_DIR, .at = RO(s.per_query_dir), .help = "  --per-query DIR      retrieval: per (task, split, subset) DIR/<task>/<split>/<subset>/ gets\n"
             "                       run.trec (qid Q0 docid rank score mieb-eval, trec_eval's ranking of the\n"
             "                       results mteb scores), per_query.tsv (trec_eval -q style: measure, qid,\n"
             "                       value; ndcg_cut_K map_cut_K recall_K P_K success_K mrr_cut_K, then 'all'\n"
             "                       means) and qrels.trec; every other family: predictions.tsv, one line\n"
             "                       per sample (zero-shot: index label prediction; clustering: index label\n"
             "                       cluster; probe: index label prediction_E...; VOC2007, compositionality,\n"
             "                       STS: see README); STS aggregates: aggregate.tsv. `mieb-eval compare`\n"
             "                       reads these folders\n"},
    {"--shard-index", .kind = MIEB_OPT_INT, .at = RO(s.select.shard_index), .width = sizeof(long), .lo = 0, .hi = INT_MAX,
     .flags = MIEB_OPT_MARK_GIVEN, .given_at = RO(s.shard_index_set), .help = "  --shard-index I      with --num-shards K: score only this process's share of the task list,\n"},
    {"--num-shards", .kind = MIEB_OPT_CHECK, .at = RO(s.select.num_shards), .check = shards_ok, .help = "  --num-shards K       for K processes (machines, GPUs) run side by side with the same arguments:\n"
             "                       the final task list (-t names in order, then each -b benchmark's tasks in\n"
             "                       mteb's order, without duplicates and without the benchmark tasks skipped\n"
             "                       for absent inputs) is split deterministically by each task's cost from\n"
             "                       the registry's sizes: costliest first, each to the shard with the least\n"
             "                       work so far (equal costs: task j to shard j % K); 0 <= I < K. The K\n"
             "                       shards together score every task once; they may share one --output-folder\n"},
    {"--corpus-parts", .kind = MIEB_OPT_CHECK, .at = RO(s.corpus_parts), .check = parts_ok, .help = "  --corpus-parts K     with --corpus-part I and --partials-dir DIR: retrieval tasks search only\n"},
    {"--corpus-part", .kind = MIEB_OPT_INT, .at = RO(s.corpus_part), .width = sizeof(long), .lo = 0, .hi = 99999,
     .flags = MIEB_OPT_MARK_GIVEN, .given_at = RO(s.corpus_part_set), .help = "  --corpus-part I      part I of the corpus (a contiguous range of mteb's 50,000-document chunks)\n"},
    {"--partials-dir", .kind = MIEB_OPT_OUT_DIR, .at = RO(s.partials_dir), .help = "  --partials-dir DIR   with ALL queries and write DIR/<task>/<split>/<subset>/part-IIIII-of-KKKKK.h5\n"
             "                       instead of a result; `mieb-eval merge` turns the K parts into the result\n"
             "                       a single process writes. Candidate-list subsets are scored whole by part 0.\n"
             "                       Other task types are scored normally by part 0 only. Combines with\n"
             "                       --shard-index/--num-shards; only-missing/never keep complete parts\n"},
    MIEB_CLI_LOG_OPTS(RO(log), "  -v, --verbose        debug logging\n", "  -q, --quiet          warnings and errors only (no progress)\n", "  --log-format F       text (default) or json: one JSON object per line on stderr\n"
                      "                       {time, level, msg, task, split, subset} for log collectors\n"),
    {"--progress", .kind = MIEB_OPT_CHOICE, .at = RO(progress), .choices = progress_modes, .help = "  --progress M         auto (default: a live line on a terminal, else a plain line every few\n"
             "                       seconds and at each task end), tty, plain or off\n"},
    {0}};
#undef RO

const struct mieb_cli_spec mieb_run_spec = {
    .name = "run",
    .opts = run_table,
    .size = sizeof(struct run_opts),
    .head = "usage: mieb-eval run --task-data DIR --embeddings DIR -t TASK [TASK ...] --output-folder DIR\n"
            "       mieb-eval run --export DIR -t TASK [TASK ...] --output-folder DIR   (same options)\n"
            "                     [--device auto|cpu|cuda|cuda:N] [-b BENCHMARK] [--mem-limit SIZE]\n"
            "                     [--similarity cosine|dot|MaxSim] [--overwrite-strategy always|never|only-missing] [-l LANG...]\n"
            "                     [--threads N] [--precision fp32|tf32|bf16] [-v | -q]\n"
            "                     [--log-format text|json] [--progress auto|tty|plain|off] [--per-query DIR]\n"
            "                     [--shard-index I --num-shards K] [--task-types T...] [--eval-splits S...]\n"
            "                     [-m MODEL] [--model-revision REV]\n"
            "                     [--corpus-parts K --corpus-part I --partials-dir DIR]\n"
            "\n",
    .tail = "\n"
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
    .unknown = "option",
    .missing = MIEB_CLI_BAD,
    .bad_value = MIEB_CLI_BAD,
};

/* The options that go together or exclude each other, once all are read (the session's own
   check, run_session.h): 0, or -1 after saying what is wrong. */
static int check_combination(const struct run_opts *o)
{
    if (mieb_run_options_check(&o->s) == MIEB_OK)
        return 0;
    mieb_fprintf_esc(stderr, "mieb-eval run: %s\n", mieb_last_error());
    return -1;
}

enum mieb_cli_parsed mieb_run_parse(int argc, char **argv, struct run_opts *o)
{
    enum mieb_cli_parsed r = mieb_cli_parse(&mieb_run_spec, argc, argv, o);
    if (r != MIEB_CLI_GO)
        return r;
    o->s.select.tasks = o->tasks;
    o->s.select.benchmarks = o->benchmarks;
    o->s.select.task_types = o->task_types;
    o->s.select.eval_splits = o->eval_splits;
    o->s.select.languages = o->languages;
    return resolve_export(o) == 0 && check_combination(o) == 0 ? MIEB_CLI_GO : MIEB_CLI_BAD;
}
