/* cli_args.c - argument parsing shared by the subcommands (commands.h). */
#include "commands.h"

#include <errno.h>
#include <stdlib.h>

bool mieb_cli_parse_i64(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}
