/*
 * cmd_synth.c - `mieb-eval synth`: write a deterministic synthetic suite (task data,
 * embeddings, model_meta.json) in the layout of FORMAT.md. Parses the command line,
 * loads the registry and dispatches each task to its family's generator
 * (host/synth/synth_<family>.c); families without a generator yet are skipped with a note.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_options.h"
#include "cli_start.h"
#include "cli_registry.h"
#include "commands.h"
#include "../config/registry.h"
#include "../config/suggest.h"
#include "../core/escape.h"
#include "../core/fileutil.h"
#include "../families/family.h"
#include "../hdf5/h5_write.h"
#include "../synth/synth.h"
#include "../synth/synth_clf.h"

static mieb_status write_model_meta(const char *out_dir, const char *sim)
{
    char dir[4096], path[4200], json[512];
    if (snprintf(dir, sizeof dir, "%s/embeddings", out_dir) >= (int)sizeof dir)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "%s: path too long", out_dir);
    MIEB_TRY(mieb_mkdirs(dir));
    snprintf(path, sizeof path, "%s/model_meta.json", dir);
    int n = snprintf(json, sizeof json,
                     "{\"name\": \"mieb-synth/synthetic-encoder\", "
                     "\"revision\": \"0000000000000000000000000000000000000000\", "
                     "\"similarity_fn_name\": \"%s\"}\n",
                     sim);
    return mieb_write_file_atomic(path, json, (size_t)n);
}

/* The generator of a family, or NULL when that family has none yet. */
static mieb_status (*generator_of(enum mieb_family fam))(const struct mieb_synth_opts *, const struct mieb_task *)
{
    switch (fam) {
    case MIEB_FAMILY_RETRIEVAL: return mieb_synth_retrieval;
    case MIEB_FAMILY_COMPOSITIONALITY: return mieb_synth_compositionality;
    case MIEB_FAMILY_STS: return mieb_synth_sts;
    case MIEB_FAMILY_CLUSTERING: return mieb_synth_clustering;
    case MIEB_FAMILY_CLASSIFICATION: return mieb_synth_classification;
    case MIEB_FAMILY_ZEROSHOT: return mieb_synth_zeroshot;
    default: return NULL;
    }
}

/* The command line of synth: the generators' options and the strings the command keeps. */
struct synth_args {
    struct mieb_synth_opts o;
    const char *tasks_arg, *registry;
    int dtype, sim; /* --dtype, --model-sim: indices into dtypes[], sims[] */
};

static const char *const dtypes[] = {"f32", "f16", "bf16", NULL};
static const enum mieb_emb_dtype dtype_of[] = {MIEB_EMB_F32, MIEB_EMB_F16, MIEB_EMB_BF16};
static const char *const sims[] = {"cosine", "dot", "MaxSim", NULL};
static const enum mieb_synth_sim sim_of[] = {MIEB_SYNTH_COSINE, MIEB_SYNTH_DOT, MIEB_SYNTH_MAXSIM};

/* --scale: a fraction above 0 (0 would write empty tasks), at most 100. */
static bool scale_ok(const char *cmd, const char *opt, const char *val, void *field)
{
    if (!mieb_cli_real(cmd, opt, val, 0.0, 100.0, (double *)field))
        return false;
    if (*(double *)field > 0.0)
        return true;
    mieb_cli_bad_value(cmd, opt, val, "a number above 0, at most 100");
    return false;
}

#define SA(f) offsetof(struct synth_args, f)
static const struct mieb_cli_opt synth_opts[] = {
    {"--out", .kind = MIEB_OPT_OUT_DIR, .at = SA(o.out_dir),
     .help = "  --out DIR        output directory (required)\n"},
    {"--seed", .kind = MIEB_OPT_INT, .at = SA(o.seed), .width = sizeof(uint64_t), .lo = 0, .hi = INT64_MAX,
     .def = "42", .help = "  --seed N         suite seed (default 42)\n"},
    /* one comma-separated word (main joins the words); empty, it would select nothing and
       write only model_meta.json */
    {"--tasks", "-t", .kind = MIEB_OPT_STRING, .at = SA(tasks_arg), .empty = "a comma-separated list of task names",
     .flags = MIEB_OPT_JOINED, .help = "  --tasks T...     task names (default: every task of a supported family)\n"},
    {"--scale", .kind = MIEB_OPT_CHECK, .at = SA(o.scale), .check = scale_ok, .def = "0.01",
     .help = "  --scale F        fraction of each task's real query/corpus counts (default 0.01)\n"},
    {"--dim", .kind = MIEB_OPT_INT, .at = SA(o.dim), .width = sizeof(int), .lo = 1, .hi = 65536, .def = "32",
     .help = "  --dim D          embedding dimension (default 32)\n"},
    {"--dtype", .kind = MIEB_OPT_CHOICE, .at = SA(dtype), .choices = dtypes,
     .help = "  --dtype T        f32, f16 (IEEE half) or bf16 (uint16 + dtype attribute) (default f32)\n"},
    {"--shards", .kind = MIEB_OPT_INT, .at = SA(o.shards), .width = sizeof(int), .lo = 1, .hi = 99999, .def = "1",
     .help = "  --shards K       split each role into K shard files (default 1: one file)\n"},
    {"--model-sim", .kind = MIEB_OPT_CHOICE, .at = SA(sim), .choices = sims,
     .help = "  --model-sim S    similarity_fn_name in model_meta.json; MaxSim writes multi-vector roles\n"},
    {"--compress", .kind = MIEB_OPT_FLAG, .at = SA(o.compress),
     .help = "  --compress       chunked + shuffle + deflate embeddings\n"},
    {"--registry", .kind = MIEB_OPT_PATH, .at = SA(registry),
     .help = "  --registry FILE  task registry (default: $MIEB_REGISTRY or configs/tasks.json)\n"},
    {0}};
#undef SA

const struct mieb_cli_spec mieb_synth_spec = {
    .name = "synth",
    .opts = synth_opts,
    .size = sizeof(struct synth_args),
    .head = "usage: mieb-eval synth --out DIR [--seed N] [--tasks T...] [--scale F] [--dim D]\n"
            "                       [--dtype f32|f16|bf16] [--shards K] [--model-sim cosine|dot|MaxSim]\n"
            "                       [--compress] [--registry FILE]\n"
            "\n"
            "Writes DIR/task-data/<Task>.h5, DIR/embeddings/model_meta.json and\n"
            "DIR/embeddings/<Task>/<split>/<subset>/{queries,corpus}.h5 (FORMAT.md), identical\n"
            "on every machine for the same arguments.\n"
            "\n",
    .tail = "\n"
            "Exit status: 0 written; 2 bad command line (unknown option or task, a bad option value);\n"
            "4 registry unreadable or the suite could not be written.\n",
    .unknown = "option",
    .missing = MIEB_CLI_BAD,
    .bad_value = MIEB_CLI_BAD_SAID,
    .value_first = true,
};

static enum mieb_cli_parsed parse_args(int argc, char **argv, struct synth_args *sa)
{
    enum mieb_cli_parsed r = mieb_cli_parse(&mieb_synth_spec, argc, argv, sa);
    if (r != MIEB_CLI_GO)
        return r;
    sa->o.dtype = dtype_of[sa->dtype];
    sa->o.sim = sim_of[sa->sim];
    if (!sa->o.out_dir) {
        mieb_fprintf_esc(stderr, "mieb-eval synth: --out DIR is required\n");
        return MIEB_CLI_BAD;
    }
    return MIEB_CLI_GO;
}

int mieb_cmd_synth(int argc, char **argv)
{
    struct synth_args sa;
    int rc;
    if (!mieb_cli_start(&mieb_synth_spec, parse_args(argc, argv, &sa), NULL, &rc))
        return rc;
    const struct mieb_synth_opts o = sa.o;
    const char *tasks_arg = sa.tasks_arg, *sim = sims[sa.sim];
    mieb_status st;

    struct mieb_registry reg;
    if (!mieb_cli_registry("synth", sa.registry, NULL, &reg))
        return MIEB_EXIT_FATAL;
    /* The selection: named tasks (all must exist), else the whole registry. */
    const struct mieb_task **sel = calloc((size_t)reg.n_tasks + 1, sizeof *sel);
    char *names = tasks_arg ? strdup(tasks_arg) : NULL;
    int n_sel = 0;
    if (!sel || (tasks_arg && !names)) {
        mieb_fprintf_esc(stderr, "mieb-eval synth: out of memory\n");
        rc = MIEB_EXIT_FATAL;
        goto out;
    }
    if (names) {
        for (char *tok = names, *next; tok; tok = next) {
            if ((next = strchr(tok, ',')) != NULL)
                *next++ = '\0';
            if (!*tok)
                continue; /* tolerate "A,,B" and a trailing comma */
            const struct mieb_task *t = mieb_registry_find(&reg, tok);
            if (!t) {
                char msg[512];
                mieb_unknown_task_msg(&reg, tok, msg, sizeof msg);
                mieb_fprintf_esc(stderr, "mieb-eval synth: %s\n", msg);
                rc = MIEB_EXIT_USAGE;
                goto out;
            }
            /* an aggregate task has no data of its own: generate its sub-task (once) */
            const char *sub = mieb_aggregate_subtask(t->name);
            if (sub && mieb_registry_find(&reg, sub))
                t = mieb_registry_find(&reg, sub);
            int dup = 0;
            for (int k = 0; k < n_sel; k++)
                dup |= sel[k] == t;
            if (!dup && n_sel < reg.n_tasks)
                sel[n_sel++] = t;
        }
    } else {
        for (int i = 0; i < reg.n_tasks; i++)
            if (!mieb_aggregate_subtask(reg.tasks[i].name)) /* generated through their sub-task */
                sel[n_sel++] = &reg.tasks[i];
    }

    if ((st = write_model_meta(o.out_dir, sim)) != MIEB_OK) {
        mieb_fprintf_esc(stderr, "mieb-eval synth: %s\n", mieb_last_error());
        rc = MIEB_EXIT_FATAL;
        goto out;
    }
    int skipped = 0;
    for (int i = 0; i < n_sel; i++) {
        const struct mieb_task *t = sel[i];
        mieb_status (*gen)(const struct mieb_synth_opts *, const struct mieb_task *) = generator_of(t->family);
        if (!gen) {
            if (names) /* only worth a line each when the user asked for the task by name */
                mieb_fprintf_esc(stderr, "mieb-eval synth: skipping %s: no generator for type %s yet\n", t->name, t->type);
            skipped++;
            continue;
        }
        if ((st = gen(&o, t)) != MIEB_OK) {
            mieb_fprintf_esc(stderr, "mieb-eval synth: %s: %s\n", t->name, mieb_last_error());
            rc = MIEB_EXIT_FATAL;
            goto out;
        }
    }
    if (skipped && !names)
        mieb_fprintf_esc(stderr, "mieb-eval synth: skipped %d task(s) of families without a generator yet\n", skipped);
out:
    free(names);
    free(sel);
    mieb_registry_free(&reg);
    return rc;
}
