/* cli_style.c - the conventions every command shares: GNU and mteb spellings of options, and
   the short usage a usage error prints (commands.h). */
#include "commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char **mieb_cli_normalize(int argc, char **argv, int *out_argc)
{
    /* at most one extra word per argument; the strings of split options live after the pointers */
    size_t bytes = (size_t)(2 * argc + 1) * sizeof(char *);
    for (int i = 0; i < argc; i++)
        bytes += strlen(argv[i]) + 1;
    char **out = malloc(bytes);
    if (!out)
        return NULL;
    char *pool = (char *)(out + 2 * argc + 1);
    int n = 0, rest = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (rest || i == 0 || strncmp(a, "--", 2) || !a[2]) {
            rest |= i > 0 && !strcmp(a, "--"); /* after "--" everything is passed on as it is */
            out[n++] = argv[i];
            continue;
        }
        /* --name[=value]: mteb's underscores become hyphens in the name, "=value" a word of its own */
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        char *name = pool;
        for (size_t k = 0; k < len; k++)
            *pool++ = a[k] == '_' ? '-' : a[k];
        *pool++ = '\0';
        out[n++] = name;
        if (eq)
            out[n++] = (char *)eq + 1;
    }
    out[n] = NULL;
    *out_argc = n;
    return out;
}

void mieb_cli_brief_usage(const char *cmd, void (*usage)(FILE *))
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem) {
        usage(mem);
        fclose(mem);
    }
    /* one line: the synopsis's first line, not the whole help */
    const char *end = text ? strchr(text, '\n') : NULL;
    if (text && end)
        fprintf(stderr, "%.*s%s\n", (int)(end - text), text, end[1] && end[1] != '\n' ? " ..." : "");
    fprintf(stderr, "Try 'mieb-eval %s --help' for the options and exit statuses.\n", cmd);
    free(text);
}
