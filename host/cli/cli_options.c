/* cli_options.c - one parser for every command's option table (cli_options.h). */
#include "cli_options.h"

#include <string.h>

#include "commands.h"
#include "../config/suggest.h"
#include "../core/escape.h"

bool mieb_cli_is_help(const char *arg)
{
    return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}

/* The most options a command has (run has 30): more are not looked at for a suggestion. */
#define MAX_OPTIONS 64

const struct mieb_cli_opt *mieb_cli_find(const struct mieb_cli_opt *opts, const char *a)
{
    for (const struct mieb_cli_opt *o = opts; o->name; o++)
        if (!strcmp(a, o->name) || (o->short_name && !strcmp(a, o->short_name)) || (o->mteb && !strcmp(a, o->mteb)))
            return o;
    return NULL;
}

bool mieb_cli_takes_list(const struct mieb_cli_opt *opt)
{
    return opt->kind == MIEB_OPT_LIST || (opt->kind == MIEB_OPT_STRING && (opt->flags & MIEB_OPT_JOINED));
}

/* A whole number into an int or a long long field, as wide as the table says. */
static void store_int(void *field, size_t width, long long v)
{
    if (width == sizeof(int)) {
        int n = (int)v; /* in range: hi fits the field, the table's contract */
        memcpy(field, &n, sizeof n);
    } else {
        memcpy(field, &v, sizeof v);
    }
}

/* Appends word to opt's list: false after saying that the list is full. */
static bool append(const char *cmd, const struct mieb_cli_opt *opt, const char *a, const char *word, void *opts)
{
    const char **list = (const char **)((char *)opts + opt->at);
    int *n = (int *)((char *)opts + opt->count_at);
    if (*n >= opt->cap) {
        /* never dropped: a run that silently left out names would score less than was asked */
        if (opt->flags & MIEB_OPT_OF_TASKS)
            mieb_fprintf_esc(stderr, "mieb-eval %s: too many tasks (at most %d)\n", cmd, opt->cap);
        else
            mieb_fprintf_esc(stderr, "mieb-eval %s: too many values for %s (at most %d)\n", cmd, a, opt->cap);
        return false;
    }
    list[(*n)++] = word;
    return true;
}

/* One value of opt (typed as `a`) checked and stored at its field: false after the message. */
static bool store(const char *cmd, const struct mieb_cli_opt *opt, const char *a, const char *val, void *opts)
{
    void *field = (char *)opts + opt->at;
    long long v;
    int k;
    switch (opt->kind) {
    case MIEB_OPT_PATH:
    case MIEB_OPT_IN_DIR:
    case MIEB_OPT_OUT_DIR:
        if (!(opt->kind == MIEB_OPT_PATH     ? mieb_cli_path
              : opt->kind == MIEB_OPT_IN_DIR ? mieb_cli_dir
                                             : mieb_cli_out_dir)(cmd, a, val))
            return false;
        memcpy(field, &val, sizeof val);
        return true;
    case MIEB_OPT_STRING:
        if (opt->empty && !val[0]) {
            mieb_cli_bad_value(cmd, a, val, opt->empty);
            return false;
        }
        memcpy(field, &val, sizeof val);
        return true;
    case MIEB_OPT_INT:
        if (!mieb_cli_int(cmd, a, val, opt->lo, opt->hi, &v))
            return false;
        store_int(field, opt->width, v);
        return true;
    case MIEB_OPT_SIZE:
        return mieb_cli_size(cmd, a, val, (size_t)opt->lo, (size_t *)field);
    case MIEB_OPT_REAL:
        return mieb_cli_real(cmd, a, val, opt->rlo, opt->rhi, (double *)field);
    case MIEB_OPT_CHOICE:
        if (!mieb_cli_choice(cmd, a, val, opt->choices, &k))
            return false;
        if (opt->flags & MIEB_OPT_AS_STRING)
            memcpy(field, &opt->choices[k], sizeof(const char *));
        else
            memcpy(field, &k, sizeof k);
        return true;
    case MIEB_OPT_EACH:
        return append(cmd, opt, a, val, opts);
    case MIEB_OPT_CHECK:
        return opt->check(cmd, a, val, field);
    default: /* FLAG and LIST take no single value */
        return false;
    }
}

/* A list option at argv[*i]: the words up to the next option; *i moves past them. GO, or
   after the message bad_value (an empty word, one past the capacity) or BAD (no word). */
static enum mieb_cli_parsed take_list(const struct mieb_cli_spec *spec, const struct mieb_cli_opt *opt, int argc,
                                      char **argv, int *i, void *opts)
{
    const char *a = argv[*i];
    int got = 0;
    for (; *i + 1 < argc && argv[*i + 1][0] != '-'; got++) {
        if (opt->empty && !argv[*i + 1][0]) { /* names nothing: every task would be skipped, exit 0 */
            mieb_cli_bad_value(spec->name, a, "", opt->empty);
            return spec->bad_value;
        }
        if (!append(spec->name, opt, a, argv[++*i], opts))
            return spec->bad_value;
    }
    if (!got && (opt->flags & MIEB_OPT_NEED_ONE)) {
        mieb_fprintf_esc(stderr,
                         opt->flags & MIEB_OPT_OF_TASKS ? "mieb-eval %s: %s needs at least one task name\n"
                                                        : "mieb-eval %s: %s needs at least one value\n",
                         spec->name, a);
        return MIEB_CLI_BAD;
    }
    return MIEB_CLI_GO;
}

/* Zero, then each option's default read as if given (without marking it given). */
static void defaults(const struct mieb_cli_spec *spec, void *opts)
{
    memset(opts, 0, spec->size);
    for (const struct mieb_cli_opt *o = spec->opts; o->name; o++)
        if (o->def)
            store(spec->name, o, o->name, o->def, opts);
}

/* The table's long option closest to a mistyped long option a (config/suggest.h), or NULL;
   a short option is one letter, too short to guess from. */
static const char *suggest_option(const struct mieb_cli_opt *opts, const char *a)
{
    const char *names[2 * MAX_OPTIONS];
    int n = 0;
    if (strncmp(a, "--", 2) || !a[2])
        return NULL;
    for (const struct mieb_cli_opt *o = opts; o->name && n + 2 <= 2 * MAX_OPTIONS; o++) {
        names[n++] = o->name;
        names[n++] = o->mteb;
    }
    return mieb_suggest(a, names, n);
}

/* argv[*i], which is no option of the table: a positional word, or an unknown option. */
static enum mieb_cli_parsed not_an_option(const struct mieb_cli_spec *spec, int argc, char **argv, int i, void *opts)
{
    const char *a = argv[i];
    if (spec->value_first && i + 1 >= argc) {
        mieb_fprintf_esc(stderr, "mieb-eval %s: %s needs a value\n", spec->name, a);
        return spec->missing;
    }
    if (spec->positional && a[0] != '-')
        return spec->positional(spec->name, a, opts);
    const char *close = suggest_option(spec->opts, a);
    if (close)
        mieb_fprintf_esc(stderr, "mieb-eval %s: unknown %s '%s' (did you mean '%s'?)\n", spec->name, spec->unknown, a,
                         close);
    else
        mieb_fprintf_esc(stderr, "mieb-eval %s: unknown %s '%s'\n", spec->name, spec->unknown, a);
    return MIEB_CLI_BAD;
}

enum mieb_cli_parsed mieb_cli_parse(const struct mieb_cli_spec *spec, int argc, char **argv, void *opts)
{
    defaults(spec, opts);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const struct mieb_cli_opt *opt = mieb_cli_find(spec->opts, a);
        enum mieb_cli_parsed r = MIEB_CLI_GO;
        if (mieb_cli_is_help(a))
            return MIEB_CLI_HELP;
        if (!opt) {
            r = not_an_option(spec, argc, argv, i, opts);
        } else if (opt->kind == MIEB_OPT_FLAG) {
            *(bool *)((char *)opts + opt->at) = true;
        } else if (opt->kind == MIEB_OPT_LIST) {
            r = take_list(spec, opt, argc, argv, &i, opts);
        } else if (i + 1 >= argc) {
            mieb_fprintf_esc(stderr, "mieb-eval %s: %s needs a value\n", spec->name, a);
            return spec->missing;
        } else if (!store(spec->name, opt, a, argv[++i], opts)) {
            r = spec->bad_value;
        }
        if (r != MIEB_CLI_GO)
            return r;
        if (opt && (opt->flags & MIEB_OPT_MARK_GIVEN))
            *(bool *)((char *)opts + opt->given_at) = true;
    }
    return MIEB_CLI_GO;
}

void mieb_cli_help(const struct mieb_cli_spec *spec, FILE *f)
{
    fputs(spec->head, f);
    for (const struct mieb_cli_opt *o = spec->opts; o->name; o++)
        if (o->help)
            fputs(o->help, f);
    if (spec->tail)
        fputs(spec->tail, f);
}
