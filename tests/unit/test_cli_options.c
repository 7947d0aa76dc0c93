/*
 * test_cli_options.c - host/cli/cli_options.c, the one parser of the commands' option tables:
 * defaults read before the command line, each kind stored in its field (int and long long
 * widths, a choice's index or text), "given" marks, lists up to the next option, a value past
 * a list's capacity refused (never dropped), positional words, the usage-error answers a
 * command chose, and --help assembled from the table. The refusals print one line each on
 * stderr; that is expected output here.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cli/cli_options.h"

struct t_opts {
    bool flag, seed_given;
    int small;
    long long big;
    double real;
    int mode;
    const char *prec, *path, *name;
    const char *list[3], *each[2], *words[2];
    int n_list, n_each, n_words;
    size_t size;
};

static const char *const modes[] = {"a", "b", "c", NULL};

static enum mieb_cli_parsed word(const char *cmd, const char *w, void *opts)
{
    struct t_opts *o = opts;
    (void)cmd;
    if (o->n_words == 2)
        return MIEB_CLI_BAD_SAID;
    o->words[o->n_words++] = w;
    return MIEB_CLI_GO;
}

#define TO(f) offsetof(struct t_opts, f)
static const struct mieb_cli_opt table[] = {
    {"--flag", "-f", .kind = MIEB_OPT_FLAG, .at = TO(flag), .help = "  -f, --flag\n"},
    {"--small", .kind = MIEB_OPT_INT, .at = TO(small), .width = sizeof(int), .lo = 1, .hi = 9, .def = "3"},
    {"--big", .kind = MIEB_OPT_INT, .at = TO(big), .width = sizeof(long long), .lo = 0, .hi = 1LL << 40,
     .flags = MIEB_OPT_MARK_GIVEN, .given_at = TO(seed_given), .help = "  --big N\n"},
    {"--real", .kind = MIEB_OPT_REAL, .at = TO(real), .rlo = 0, .rhi = 1, .def = "0.5"},
    {"--mode", .kind = MIEB_OPT_CHOICE, .at = TO(mode), .choices = modes},
    {"--prec", .kind = MIEB_OPT_CHOICE, .at = TO(prec), .choices = modes, .flags = MIEB_OPT_AS_STRING, .def = "b"},
    {"--path", .kind = MIEB_OPT_PATH, .at = TO(path)},
    {"--name", .kind = MIEB_OPT_STRING, .at = TO(name), .empty = "a name"},
    {"--list", "-l", .kind = MIEB_OPT_LIST, .at = TO(list), .count_at = TO(n_list), .cap = 3, .empty = "a word",
     .flags = MIEB_OPT_NEED_ONE},
    {"--each", "-e", "--eaches", .kind = MIEB_OPT_EACH, .at = TO(each), .count_at = TO(n_each), .cap = 2},
    {"--size", .kind = MIEB_OPT_SIZE, .at = TO(size), .lo = 4096},
    {0}};

static const struct mieb_cli_spec spec = {
    .name = "test", .opts = table, .size = sizeof(struct t_opts), .head = "usage: test\n", .tail = "end\n",
    .unknown = "option", .missing = MIEB_CLI_BAD_SAID, .bad_value = MIEB_CLI_BAD_SAID, .positional = word,
};

/* The words (NULL-terminated, the command first) parsed into *o. */
static enum mieb_cli_parsed parse(struct t_opts *o, const char *const *words)
{
    char *argv[32];
    int argc = 0;
    while (words[argc])
        argv[argc] = (char *)words[argc], argc++;
    return mieb_cli_parse(&spec, argc, argv, o);
}

static void check_values(void)
{
    struct t_opts o;
    memset(&o, 0x5a, sizeof o); /* the parser zeroes it first */
    CHECK(parse(&o, (const char *[]){"test", NULL}) == MIEB_CLI_GO);
    CHECK(!o.flag && o.small == 3 && o.real == 0.5 && o.mode == 0 && !strcmp(o.prec, "b") && !o.seed_given);
    CHECK(!o.path && !o.n_list && !o.n_each && !o.size);
    CHECK(parse(&o, (const char *[]){"test", "-f", "--small", "9", "--big", "1099511627776", "--mode", "c",
                                     "--prec", "a", "--path", "p", "-l", "x", "y", "--size", "8K", "w1", NULL}) ==
          MIEB_CLI_GO);
    CHECK(o.flag && o.small == 9 && o.big == 1LL << 40 && o.seed_given && o.mode == 2 && !strcmp(o.prec, "a"));
    CHECK(!strcmp(o.path, "p") && o.n_list == 2 && !strcmp(o.list[1], "y") && o.size == 8192);
    CHECK(o.n_words == 1 && !strcmp(o.words[0], "w1"));
    CHECK(parse(&o, (const char *[]){"test", "-e", "A", "--eaches", "B", NULL}) == MIEB_CLI_GO && o.n_each == 2);
}

static void check_refusals(void)
{
    struct t_opts o;
    /* one past a capacity is a usage error, never a value silently dropped */
    CHECK(parse(&o, (const char *[]){"test", "-e", "A", "-e", "B", "-e", "C", NULL}) == MIEB_CLI_BAD_SAID);
    CHECK(parse(&o, (const char *[]){"test", "-l", "a", "b", "c", "d", NULL}) == MIEB_CLI_BAD_SAID);
    CHECK(parse(&o, (const char *[]){"test", "-l", "-f", NULL}) == MIEB_CLI_BAD);       /* needs one */
    CHECK(parse(&o, (const char *[]){"test", "-l", "", NULL}) == MIEB_CLI_BAD_SAID);    /* an empty word */
    CHECK(parse(&o, (const char *[]){"test", "--name", "", NULL}) == MIEB_CLI_BAD_SAID);
    CHECK(parse(&o, (const char *[]){"test", "--small", "10", NULL}) == MIEB_CLI_BAD_SAID);
    CHECK(parse(&o, (const char *[]){"test", "--small", NULL}) == MIEB_CLI_BAD_SAID);   /* spec.missing */
    CHECK(parse(&o, (const char *[]){"test", "--mode", "d", NULL}) == MIEB_CLI_BAD_SAID);
    CHECK(parse(&o, (const char *[]){"test", "--real", "2", NULL}) == MIEB_CLI_BAD_SAID);
    CHECK(parse(&o, (const char *[]){"test", "--path", "", NULL}) == MIEB_CLI_BAD_SAID);
    CHECK(parse(&o, (const char *[]){"test", "--size", "1K", NULL}) == MIEB_CLI_BAD_SAID);
    CHECK(parse(&o, (const char *[]){"test", "--nope", NULL}) == MIEB_CLI_BAD);
    CHECK(parse(&o, (const char *[]){"test", "a", "b", "c", NULL}) == MIEB_CLI_BAD_SAID); /* the positional's word */
    /* help wins only where it stands: after a bad option the error is said */
    CHECK(parse(&o, (const char *[]){"test", "--small", "3", "-h", "--nope", NULL}) == MIEB_CLI_HELP);
    CHECK(parse(&o, (const char *[]){"test", "--nope", "--help", NULL}) == MIEB_CLI_BAD);
}

static void check_help(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f != NULL);
    if (!f)
        return;
    mieb_cli_help(&spec, f);
    fclose(f);
    CHECK_MSG(!strcmp(text, "usage: test\n  -f, --flag\n  --big N\nend\n"), "%s", text);
    free(text);
}

int main(void)
{
    check_values();
    check_refusals();
    check_help();
    return check_done("test_cli_options");
}
