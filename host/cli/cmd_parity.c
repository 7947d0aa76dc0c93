/*
 * cmd_parity.c - `mieb-eval parity --reference DIR --candidate DIR`: compares two mteb
 * result folders (typically mteb.evaluate's, through the replay model of mieb_eval.export,
 * and mieb-eval's on the same embeddings) task by task and key by key, with the per-family
 * tolerances of host/analysis/results_compare.c; prints a table and exits 1 when anything is above
 * tolerance or present on one side only.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_options.h"
#include "cli_start.h"
#include "commands.h"
#include "../config/registry.h"
#include "../core/escape.h"
#include "../core/pyfloat.h"
#include "../analysis/results_compare.h"
#include "../results/results_reader.h"

#define MAX_TASK_FILTER 512
#define MAX_TOL_OVERRIDES 16
#define MAX_DIFF_LINES 40 /* difference lines printed per task (all are counted) */

struct tol_override {
    enum mieb_family fam;
    struct mieb_tolerance tol;
};

struct opts {
    const char *ref, *cand, *registry;
    const char *tasks[MAX_TASK_FILTER];
    int n_tasks;
    struct tol_override ov[MAX_TOL_OVERRIDES];
    int n_ov;
    bool quiet;
};

/* Per-family totals for the closing summary. */
struct fam_total {
    int n_tasks;
    long n_values;
    double max_diff;
};

static int parse_tolerance(const char *s, struct opts *o)
{
    const char *eq = strchr(s, '=');
    char label[64];
    if (!eq || eq == s || (size_t)(eq - s) >= sizeof label || o->n_ov == MAX_TOL_OVERRIDES)
        return -1;
    memcpy(label, s, (size_t)(eq - s));
    label[eq - s] = '\0';
    enum mieb_family fam = mieb_family_from_label(label);
    if (fam == MIEB_FAMILY_UNKNOWN && strcmp(label, "unknown") != 0)
        return -1;
    struct mieb_tolerance t = {true, 0.0};
    if (strcmp(eq + 1, "exact") != 0) {
        t.exact = false;
        if (!mieb_cli_parse_real(eq + 1, 0.0, HUGE_VAL, &t.abs_tol))
            return -1;
    }
    o->ov[o->n_ov++] = (struct tol_override){fam, t};
    return 0;
}

/* --tolerance FAMILY=X: an override appended to the options (field: the whole struct opts). */
static bool tolerance_ok(const char *cmd, const char *opt, const char *val, void *field)
{
    if (parse_tolerance(val, field) == 0)
        return true;
    mieb_fprintf_esc(stderr, "mieb-eval %s: bad %s '%s' (FAMILY=X with FAMILY one of retrieval, "
                     "zero-shot, compositionality, sts, probe, clustering, unknown; X >= 0 or exact)\n",
                     cmd, opt, val);
    return false;
}

#define PO(f) offsetof(struct opts, f)
static const struct mieb_cli_opt parity_opts[] = {
    {"--reference", .kind = MIEB_OPT_PATH, .at = PO(ref)}, /* in the synopsis */
    {"--candidate", .kind = MIEB_OPT_PATH, .at = PO(cand)},
    {"--tasks", "-t", .kind = MIEB_OPT_LIST, .at = PO(tasks), .count_at = PO(n_tasks), .cap = MAX_TASK_FILTER,
     .flags = MIEB_OPT_NEED_ONE | MIEB_OPT_OF_TASKS, .help = "  -t, --tasks TASK...     compare only these tasks\n"},
    {"--tolerance", .kind = MIEB_OPT_CHECK, .at = 0, .check = tolerance_ok,
     .help = "  --tolerance FAMILY=X    absolute tolerance X for a family (retrieval, zero-shot,\n"
             "                          compositionality, sts, probe, clustering, unknown);\n"
             "                          X = exact restores exact-after-rounding\n"},
    {"--registry", .kind = MIEB_OPT_PATH, .at = PO(registry), .help = "  --registry FILE         tasks.json for the task types [$MIEB_REGISTRY, else the built-in]\n"},
    {"--quiet", "-q", .kind = MIEB_OPT_FLAG, .at = PO(quiet), .help = "  -q, --quiet             print only the differences and the closing line\n"},
    {0}};
#undef PO

const struct mieb_cli_spec mieb_parity_spec = {
    .name = "parity",
    .opts = parity_opts,
    .size = sizeof(struct opts),
    .head = "usage: mieb-eval parity --reference DIR --candidate DIR [-t TASK ...]\n"
            "                        [--tolerance FAMILY=X ...] [--registry FILE] [-q]\n"
            "\n"
            "Compares two mteb result folders (an output folder holding results/, a results/ folder,\n"
            "a model folder or a revision folder; mteb's cache folder too) key by key: for every task\n"
            "file, every split, every hf_subset and every score key, recursively (lists such as\n"
            "scores_per_experiment included). Revision folders are paired by model name and revision\n"
            "(or paired as they are when each side holds exactly one).\n"
            "\n"
            "Tolerances per family (the task's type in the registry; a task the registry lacks is\n"
            "recognised by its keys):\n"
            "  retrieval, zero-shot, compositionality, sts   exact after 6-decimal rounding\n"
            "  probe (ImageClassification, VOC2007 kNN)      |diff| <= 1e-4\n"
            "  clustering                                    |diff| <= 1e-4\n"
            "NaN equals NaN. A task, split, subset or key present on one side only is a mismatch.\n"
            "\n",
    .tail = "\n"
            "Exit status: 0 every value within tolerance; 1 a value above tolerance, or a task, split,\n"
            "subset or key missing on one side (all listed), or a folder without results or an\n"
            "unreadable result file; 2 bad command line; 4 registry unreadable.\n",
    .unknown = "argument",
    .missing = MIEB_CLI_BAD,
    .bad_value = MIEB_CLI_BAD,
};

static enum mieb_cli_parsed parse_args(int argc, char **argv, struct opts *o)
{
    enum mieb_cli_parsed r = mieb_cli_parse(&mieb_parity_spec, argc, argv, o);
    if (r == MIEB_CLI_GO && (!o->ref || !o->cand)) {
        mieb_fprintf_esc(stderr, "mieb-eval parity: --reference and --candidate are required\n");
        return MIEB_CLI_BAD;
    }
    return r;
}

static struct mieb_tolerance tolerance_for(const struct opts *o, enum mieb_family fam)
{
    for (int i = o->n_ov - 1; i >= 0; i--)
        if (o->ov[i].fam == fam)
            return o->ov[i].tol;
    return mieb_family_tolerance(fam);
}

static void tol_text(struct mieb_tolerance t, char *buf, size_t n)
{
    if (t.exact)
        snprintf(buf, n, "exact (6 dp)");
    else
        snprintf(buf, n, "<= %g", t.abs_tol);
}

static bool wanted(const struct opts *o, const char *task)
{
    if (!o->n_tasks)
        return true;
    for (int i = 0; i < o->n_tasks; i++)
        if (!strcmp(o->tasks[i], task))
            return true;
    return false;
}

static const struct mieb_task_result *find_task(const struct mieb_model_results *m, const char *name)
{
    for (int i = 0; m && i < m->n_tasks; i++)
        if (!strcmp(m->tasks[i].task_name, name))
            return &m->tasks[i];
    return NULL;
}

/* Counters of one run. */
struct tally {
    int ok, above, missing, unreadable;
    struct fam_total fam[MIEB_FAMILY_STS + 1];
};

static void print_row(const struct opts *o, const char *task, const char *fam, long n, double maxd,
                      const char *tol, const char *status)
{
    if (o->quiet)
        return;
    char md[40];
    if (isnan(maxd))
        snprintf(md, sizeof md, "-");
    else
        snprintf(md, sizeof md, "%.3g", maxd);
    mieb_printf_esc("%-40s  %-16s  %7ld  %10s  %-13s  %s\n", task, fam, n, md, tol, status);
}

/* Compare one task present on both sides (or report it missing on one). */
static void compare_task(const struct opts *o, const struct mieb_registry *reg, const char *task,
                         const struct mieb_task_result *a, const struct mieb_task_result *b, struct tally *t)
{
    if (!a || !b) {
        print_row(o, task, "-", 0, NAN, "-", a ? "MISSING in candidate" : "MISSING in reference");
        if (o->quiet)
            mieb_printf_esc("%s: MISSING in %s\n", task, a ? "candidate" : "reference");
        t->missing++;
        return;
    }
    cJSON *ja = NULL, *jb = NULL;
    mieb_status st = mieb_read_py_json_file(a->path, &ja);
    if (st == MIEB_OK)
        st = mieb_read_py_json_file(b->path, &jb);
    const struct mieb_task *rt = reg ? mieb_registry_find(reg, task) : NULL;
    enum mieb_family fam = rt ? rt->family : MIEB_FAMILY_UNKNOWN;
    if (fam == MIEB_FAMILY_UNKNOWN && ja)
        fam = mieb_family_from_result(ja);
    struct mieb_tolerance tol = tolerance_for(o, fam);
    struct mieb_cmp_result r;
    if (st == MIEB_OK)
        st = mieb_results_compare(ja, jb, tol, &r);
    cJSON_Delete(ja);
    cJSON_Delete(jb);
    char tt[32];
    tol_text(tol, tt, sizeof tt);
    if (st != MIEB_OK) {
        mieb_fprintf_esc(stderr, "mieb-eval parity: %s: %s\n", task, mieb_last_error());
        print_row(o, task, mieb_family_label(fam), 0, NAN, tt, "UNREADABLE");
        t->unreadable++;
        return;
    }
    print_row(o, task, mieb_family_label(fam), r.n_compared, r.max_diff, tt, r.n_diffs ? "ABOVE TOLERANCE" : "ok");
    for (int i = 0; i < r.n_diffs && i < MAX_DIFF_LINES; i++) {
        const struct mieb_cmp_diff *d = &r.diffs[i];
        char dd[40] = "";
        if (!isnan(d->diff))
            snprintf(dd, sizeof dd, "  |diff| = %.3g", d->diff);
        mieb_printf_esc("    %s %s: reference %s, candidate %s%s\n", task, d->key, d->ref, d->cand, dd);
    }
    if (r.n_diffs > MAX_DIFF_LINES)
        mieb_printf_esc("    %s: ... and %d more\n", task, r.n_diffs - MAX_DIFF_LINES);
    struct fam_total *ft = &t->fam[fam];
    ft->n_tasks++;
    ft->n_values += r.n_compared;
    if (r.max_diff > ft->max_diff)
        ft->max_diff = r.max_diff;
    if (r.n_diffs)
        t->above++;
    else
        t->ok++;
    mieb_cmp_result_free(&r);
}

/* Every task of either folder (in the reference's order, then the candidate's extras). */
static void compare_pair(const struct opts *o, const struct mieb_registry *reg, const struct mieb_model_results *a,
                         const struct mieb_model_results *b, struct tally *t)
{
    if (!o->quiet)
        mieb_printf_esc("reference %s (%s @ %s)\ncandidate %s (%s @ %s)\n\n%-40s  %-16s  %7s  %10s  %-13s  %s\n",
               a ? a->dir : "-", a ? a->name : "-", a ? a->revision : "-", b ? b->dir : "-", b ? b->name : "-",
               b ? b->revision : "-", "task", "family", "values", "max|diff|", "tolerance", "status");
    for (int i = 0; a && i < a->n_tasks; i++)
        if (wanted(o, a->tasks[i].task_name))
            compare_task(o, reg, a->tasks[i].task_name, &a->tasks[i], find_task(b, a->tasks[i].task_name), t);
    for (int i = 0; b && i < b->n_tasks; i++)
        if (wanted(o, b->tasks[i].task_name) && !find_task(a, b->tasks[i].task_name))
            compare_task(o, reg, b->tasks[i].task_name, NULL, &b->tasks[i], t);
    /* -t names found on neither side */
    for (int k = 0; k < o->n_tasks; k++)
        if (!find_task(a, o->tasks[k]) && !find_task(b, o->tasks[k])) {
            mieb_printf_esc("%s: MISSING on both sides\n", o->tasks[k]);
            t->missing++;
        }
}

static void print_families(const struct tally *t, const struct opts *o)
{
    if (o->quiet)
        return;
    mieb_printf_esc("\n%-16s  %5s  %7s  %10s  %s\n", "family", "tasks", "values", "max|diff|", "tolerance");
    for (int f = 0; f <= MIEB_FAMILY_STS; f++) {
        const struct fam_total *ft = &t->fam[f];
        if (!ft->n_tasks)
            continue;
        char tt[32];
        tol_text(tolerance_for(o, (enum mieb_family)f), tt, sizeof tt);
        mieb_printf_esc("%-16s  %5d  %7ld  %10.3g  %s\n", mieb_family_label((enum mieb_family)f), ft->n_tasks, ft->n_values,
               ft->max_diff, tt);
    }
}

int mieb_cmd_parity(int argc, char **argv)
{
    struct opts o;
    int rc;
    if (!mieb_cli_start(&mieb_parity_spec, parse_args(argc, argv, &o), NULL, &rc))
        return rc;

    /* The registry only names each task's family; without one, the keys tell. */
    struct mieb_registry reg;
    bool have_reg = true;
    mieb_status st = o.registry ? mieb_registry_load(o.registry, &reg) : mieb_registry_load_default(&reg);
    if (st != MIEB_OK) {
        if (o.registry) {
            mieb_fprintf_esc(stderr, "mieb-eval parity: %s\n", mieb_last_error());
            return MIEB_EXIT_FATAL;
        }
        mieb_fprintf_esc(stderr, "mieb-eval parity: warning: no task registry (%s); families are recognised by their keys\n",
                mieb_last_error());
        have_reg = false;
    }

    struct mieb_model_results *ma = NULL, *mb = NULL;
    int na = 0, nb = 0, bad_a = 0, bad_b = 0;
    const char *da[1] = {o.ref}, *db[1] = {o.cand};
    st = mieb_results_scan(da, 1, &ma, &na, &bad_a);
    if (st == MIEB_OK)
        st = mieb_results_scan(db, 1, &mb, &nb, &bad_b);
    if (st != MIEB_OK) {
        mieb_fprintf_esc(stderr, "mieb-eval parity: %s\n", mieb_last_error());
        mieb_model_results_free(ma, na);
        if (have_reg)
            mieb_registry_free(&reg);
        return st == MIEB_ERR_OOM ? MIEB_EXIT_FATAL : MIEB_EXIT_TASK_FAILED;
    }

    struct tally t;
    memset(&t, 0, sizeof t);
    t.unreadable = bad_a + bad_b;
    if (!na || !nb) {
        mieb_fprintf_esc(stderr, "mieb-eval parity: no result files found under %s\n", !na ? o.ref : o.cand);
        t.missing++;
    } else if (na == 1 && nb == 1) {
        compare_pair(&o, have_reg ? &reg : NULL, &ma[0], &mb[0], &t);
    } else {
        /* several models or revisions: pair by (name, revision) */
        for (int i = 0; i < na; i++) {
            const struct mieb_model_results *b = NULL;
            for (int j = 0; j < nb && !b; j++)
                if (!strcmp(ma[i].name, mb[j].name) && !strcmp(ma[i].revision, mb[j].revision))
                    b = &mb[j];
            if (!b) {
                mieb_printf_esc("%s @ %s: MISSING in candidate (%s)\n", ma[i].name, ma[i].revision, ma[i].dir);
                t.missing++;
                continue;
            }
            compare_pair(&o, have_reg ? &reg : NULL, &ma[i], b, &t);
            if (!o.quiet)
                mieb_printf_esc("\n");
        }
        for (int j = 0; j < nb; j++) {
            bool found = false;
            for (int i = 0; i < na && !found; i++)
                found = !strcmp(ma[i].name, mb[j].name) && !strcmp(ma[i].revision, mb[j].revision);
            if (!found) {
                mieb_printf_esc("%s @ %s: MISSING in reference (%s)\n", mb[j].name, mb[j].revision, mb[j].dir);
                t.missing++;
            }
        }
    }
    print_families(&t, &o);
    mieb_printf_esc("parity: %d task(s) within tolerance, %d above tolerance, %d missing, %d unreadable\n", t.ok, t.above,
           t.missing, t.unreadable);

    mieb_model_results_free(ma, na);
    mieb_model_results_free(mb, nb);
    if (have_reg)
        mieb_registry_free(&reg);
    return (t.above || t.missing || t.unreadable) ? MIEB_EXIT_TASK_FAILED : MIEB_EXIT_OK;
}
