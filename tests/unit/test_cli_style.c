/*
 * test_cli_style.c - host/cli/cli_style.c's mieb_cli_normalize reads which options take lists
 * from the command's option table: a MIEB_OPT_LIST option gets its words and the names in
 * their commas as words of their own, a MIEB_OPT_JOINED string one comma-joined word, and any
 * other option (whatever its name) its words untouched; and the commands' table
 * (cli_commands.c) hands each command's own table to it.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cli/cli_commands.h"
#include "cli/cli_options.h"
#include "cli/commands.h"

struct t_opts {
    const char *colors[4], *names, *out, *tasks;
    int n_colors;
};

#define TO(f) offsetof(struct t_opts, f)
static const struct mieb_cli_opt table[] = {
    {"--colors", "-c", .kind = MIEB_OPT_LIST, .at = TO(colors), .count_at = TO(n_colors), .cap = 4},
    {"--my-names", .kind = MIEB_OPT_STRING, .at = TO(names), .flags = MIEB_OPT_JOINED},
    {"--out", .kind = MIEB_OPT_STRING, .at = TO(out)},
    {"--tasks", "-t", .kind = MIEB_OPT_STRING, .at = TO(tasks)}, /* a list in run, not here */
    {0}};
#undef TO

static const struct mieb_cli_spec spec = {.name = "test", .opts = table, .size = sizeof(struct t_opts)};

/* words normalized by spec (the command first) equal want, word for word */
static void check_norm(const struct mieb_cli_spec *sp, const char *const *words, const char *const *want)
{
    char *argv[32];
    int argc = 0, n = -1;
    while (words[argc])
        argv[argc] = (char *)words[argc], argc++;
    argv[argc] = NULL;
    char **out = mieb_cli_normalize(argc, argv, 0, sp, &n);
    CHECK(out != NULL);
    if (!out)
        return;
    int k = 0;
    while (want[k])
        k++;
    CHECK_MSG(n == k, "%s %s: %d words, want %d", words[0], words[1], n, k);
    for (int i = 0; i < n && i < k; i++)
        CHECK_MSG(!strcmp(out[i], want[i]), "%s %s: word %d is '%s', want '%s'", words[0], words[1], i, out[i],
                  want[i]);
    CHECK(out[n] == NULL);
    free(out);
}

static void check_table_decides(void)
{
    check_norm(&spec,
               (const char *[]){"test", "--colors", "a,b", "c", "--out", "x,y", "--my-names", "p", "q,r", "--tasks",
                                "u,v", "-c=1", "-c", "2,,3", "--", "--colors", "e,f", NULL},
               (const char *[]){"test", "--colors", "a", "b", "c", "--out", "x,y", "--my-names", "p,q,r", "--tasks",
                                "u,v", "-c=1", "-c", "2", "3", "--", "--colors", "e,f", NULL});
    /* --opt=value and mteb's underscores first, then the list */
    check_norm(&spec, (const char *[]){"test", "--colors=a,b", "--my_names=p,q", NULL},
               (const char *[]){"test", "--colors", "a", "b", "--my-names", "p,q", NULL});
    /* no table (an unknown command): only the spellings */
    check_norm(NULL, (const char *[]){"test", "--colors", "a,b", "-t", "u,v", "--out=x", NULL},
               (const char *[]){"test", "--colors", "a,b", "-t", "u,v", "--out", "x", NULL});
}

static void check_commands(void)
{
    for (const struct mieb_command *c = mieb_commands; c->name; c++) {
        CHECK(mieb_command_named(c->name) == c);
        CHECK(c->run && c->spec && c->spec->opts && !strcmp(c->spec->name, c->name) && c->summary);
    }
    CHECK(mieb_command_named("nope") == NULL && mieb_command_named("") == NULL);
    const struct mieb_command *run = mieb_command_named("run"), *synth = mieb_command_named("synth");
    CHECK(run && synth);
    if (!run || !synth)
        return;
    check_norm(run->spec, (const char *[]){"run", "-t", "A,B", "C", "--languages", "eng,fra", NULL},
               (const char *[]){"run", "-t", "A", "B", "C", "--languages", "eng", "fra", NULL});
    check_norm(synth->spec, (const char *[]){"synth", "-t", "A,B", "C", NULL},
               (const char *[]){"synth", "-t", "A,B,C", NULL});
}

int main(void)
{
    check_table_decides();
    check_commands();
    return check_done("test_cli_style");
}
