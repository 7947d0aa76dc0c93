/* cli_style.c - the spellings of options every command takes: GNU's and mteb's (commands.h). */
#include "commands.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Options that take a list: the words up to the next option, each of which may hold a
   comma-separated list itself. */
static bool is_list_option(const char *a)
{
    static const char *const names[] = {"-t", "--tasks", "--task-types", "--eval-splits", "-l", "--languages", NULL};
    for (int i = 0; names[i]; i++)
        if (!strcmp(a, names[i]))
            return true;
    return false;
}

/* Commands whose parsers read a list as one comma-separated word (the others read words). */
static bool joins_lists(const char *cmd)
{
    return cmd && (!strcmp(cmd, "synth") || !strcmp(cmd, "list-tasks"));
}

char **mieb_cli_normalize(int argc, char **argv, int cmd_index, int *out_argc)
{
    /* every comma can become a word of its own; split and joined strings live after the pointers */
    size_t words = (size_t)argc * 2 + 1, bytes = 0;
    for (int i = 0; i < argc; i++) {
        bytes += 2 * strlen(argv[i]) + 2;
        for (const char *c = argv[i]; *c; c++)
            words += *c == ',';
    }
    char **out = malloc(words * sizeof(char *) + bytes);
    if (!out)
        return NULL;
    char *pool = (char *)(out + words);
    const char *cmd = cmd_index < argc ? argv[cmd_index] : NULL;
    int n = 0, rest = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int opt_at = -1; /* where the option name just passed on is, in out */
        if (rest || i <= cmd_index || strncmp(a, "--", 2) || !a[2]) {
            rest |= i > cmd_index && !strcmp(a, "--"); /* after "--" everything is passed on as it is */
            if (!rest && i > cmd_index && a[0] == '-')
                opt_at = n;
            out[n++] = argv[i];
        } else {
            /* --name[=value]: mteb's underscores become hyphens in the name, "=value" a word of its own */
            const char *eq = strchr(a, '=');
            size_t len = eq ? (size_t)(eq - a) : strlen(a);
            char *name = pool;
            for (size_t k = 0; k < len; k++)
                *pool++ = a[k] == '_' ? '-' : a[k];
            *pool++ = '\0';
            opt_at = n;
            out[n++] = name;
            if (eq)
                out[n++] = (char *)eq + 1;
        }
        if (opt_at < 0 || !is_list_option(out[opt_at]))
            continue;
        /* a list option: its values (an "=value" already taken, then the words up to the next
           option), as one comma-joined word or as one word per name, as the command reads them */
        int first = opt_at + 1;
        while (i + 1 < argc && argv[i + 1][0] != '-')
            out[n++] = argv[++i];
        if (n == first)
            continue;
        char *joined = pool;
        for (int k = first; k < n; k++) {
            size_t l = strlen(out[k]);
            memcpy(pool, out[k], l);
            pool += l;
            *pool++ = ',';
        }
        pool[-1] = '\0';
        if (joins_lists(cmd) || !joined[0]) { /* an empty value stays one (empty) word: refused as such */
            out[first] = joined;
            n = first + 1;
            continue;
        }
        n = first;
        for (char *tok = joined, *end; tok; tok = end ? end + 1 : NULL) {
            end = strchr(tok, ',');
            if (end)
                *end = '\0';
            if (*tok)
                out[n++] = tok;
        }
        if (n == first)
            out[n++] = joined; /* only commas: the command refuses what is left */
    }
    out[n] = NULL;
    *out_argc = n;
    return out;
}
