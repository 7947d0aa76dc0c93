/* cli_style.c - the spellings of options every command takes: GNU's and mteb's (commands.h). */
#include "commands.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_options.h"

/* The option spelled a when the command's table (spec) reads a list from it, else NULL: the
   words up to the next option are its values, each of which may hold a comma-separated list
   itself (cli_options.h: mieb_cli_takes_list). */
static const struct mieb_cli_opt *list_option(const struct mieb_cli_spec *spec, const char *a)
{
    const struct mieb_cli_opt *o = spec ? mieb_cli_find(spec->opts, a) : NULL;
    return o && mieb_cli_takes_list(o) ? o : NULL;
}

char **mieb_cli_normalize(int argc, char **argv, int cmd_index, const struct mieb_cli_spec *spec, int *out_argc)
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
        const struct mieb_cli_opt *list = opt_at < 0 ? NULL : list_option(spec, out[opt_at]);
        if (!list)
            continue;
        /* a list option: its values (an "=value" already taken, then the words up to the next
           option), as one comma-joined word (MIEB_OPT_JOINED) or as one word per name (a
           MIEB_OPT_LIST), as the command reads them */
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
        /* an empty value stays one (empty) word: refused as such */
        if ((list->flags & MIEB_OPT_JOINED) || !joined[0]) {
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
