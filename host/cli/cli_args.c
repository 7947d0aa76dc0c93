/* cli_args.c - argument parsing shared by the subcommands (commands.h). */
#include "commands.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/escape.h"

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

void mieb_cli_bad_value(const char *cmd, const char *opt, const char *val, const char *expected)
{
    mieb_fprintf_esc(stderr, "mieb-eval %s: bad %s '%s' (%s)\n", cmd, opt, val, expected);
}

bool mieb_cli_int(const char *cmd, const char *opt, const char *val, long long lo, long long hi, long long *out)
{
    if (mieb_cli_parse_i64(val, lo, hi, out))
        return true;
    char want[96];
    snprintf(want, sizeof want, "a whole number from %lld to %lld", lo, hi);
    mieb_cli_bad_value(cmd, opt, val, want);
    return false;
}

/* Where the plain decimal number at the start of s ends (digits, a point, an exponent), or
   s itself when there is none; strtod would also take "nan", "inf", hex and leading blanks. */
static const char *decimal_end(const char *s)
{
    const char *p = s, *digits;
    while (isdigit((unsigned char)*p))
        p++;
    if (*p == '.')
        for (p++; isdigit((unsigned char)*p);)
            p++;
    if (p == s || (p == s + 1 && *s == '.'))
        return s;
    if (*p == 'e' || *p == 'E') {
        digits = p + 1 + (p[1] == '+' || p[1] == '-');
        if (isdigit((unsigned char)*digits))
            for (p = digits; isdigit((unsigned char)*p);)
                p++;
    }
    return p;
}

/* The plain decimal at the start of s (NAN when there is none); *end after it. */
static double decimal(const char *s, const char **end)
{
    *end = decimal_end(s);
    if (*end == s)
        return NAN;
    char *e2;
    double v = strtod(s, &e2);
    return e2 == *end ? v : NAN;
}

/* K/M/G/T (any case), optionally followed by "i" and/or "B": KiB, MB, G, ... -> its multiple. */
static bool size_suffix(const char *s, double *mul)
{
    static const char units[] = "kmgt";
    const char *u = *s ? strchr(units, tolower((unsigned char)*s)) : NULL;
    *mul = 1.0;
    if (u) {
        for (const char *p = units; p <= u; p++)
            *mul *= 1024.0;
        s++;
        if (*s == 'i')
            s++;
    }
    if (*s == 'B' || *s == 'b')
        s++;
    return *s == '\0';
}

bool mieb_cli_size(const char *cmd, const char *opt, const char *val, size_t min, size_t *out)
{
    const char *end;
    double v = decimal(val, &end);
    double mul = 1.0;
    /* 2^64 as a double: anything at or above it does not fit size_t (and the cast would be UB) */
    const double limit = (double)SIZE_MAX + 1.0;
    if (isfinite(v) && size_suffix(end, &mul) && v * mul >= (double)(min ? min : 1) && v * mul < limit) {
        *out = (size_t)(v * mul);
        return true;
    }
    char want[160];
    const char *unit = min % (1u << 20) == 0 ? "M" : min % 1024 == 0 ? "K" : "";
    size_t shown = *unit == 'M' ? min >> 20 : *unit == 'K' ? min >> 10 : min;
    snprintf(want, sizeof want,
             "a size: a positive number with an optional K, M, G or T suffix, e.g. 512M or 8G; at least %zu%s, "
             "less than 2^64 bytes",
             shown, unit);
    mieb_cli_bad_value(cmd, opt, val, want);
    return false;
}

bool mieb_cli_parse_real(const char *s, double lo, double hi, double *out)
{
    const char *end;
    double v = decimal(s, &end);
    if (!isfinite(v) || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

bool mieb_cli_real(const char *cmd, const char *opt, const char *val, double lo, double hi, double *out)
{
    if (mieb_cli_parse_real(val, lo, hi, out))
        return true;
    char want[96];
    snprintf(want, sizeof want, "a number from %g to %g", lo, hi);
    mieb_cli_bad_value(cmd, opt, val, want);
    return false;
}

bool mieb_cli_choice(const char *cmd, const char *opt, const char *val, const char *const *choices, int *idx)
{
    char want[256] = "one of";
    for (int i = 0; choices[i]; i++) {
        if (!strcmp(val, choices[i])) {
            *idx = i;
            return true;
        }
        size_t n = strlen(want);
        snprintf(want + n, sizeof want - n, "%s %s", i ? "," : "", choices[i]);
    }
    mieb_cli_bad_value(cmd, opt, val, want);
    return false;
}

bool mieb_cli_path(const char *cmd, const char *opt, const char *val)
{
    if (val[0])
        return true;
    /* "" would resolve against the current or the root folder, never what was meant */
    mieb_cli_bad_value(cmd, opt, val, "a path cannot be empty");
    return false;
}

bool mieb_cli_refuse_controls(const char *cmd, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!mieb_has_control(argv[i]))
            continue;
        /* the option a value belongs to, when the word before it is one */
        bool is_value = i > 1 && argv[i][0] != '-' && argv[i - 1][0] == '-';
        const char *what = is_value ? argv[i - 1] : argv[i][0] == '-' ? "option" : "argument";
        mieb_cli_bad_value(cmd, what, argv[i],
                           "it holds a control character, shown escaped; no path, name or value on the "
                           "command line may hold one");
        return false;
    }
    return true;
}

bool mieb_cli_dir(const char *cmd, const char *opt, const char *val)
{
    struct stat sb;
    if (!mieb_cli_path(cmd, opt, val))
        return false;
    int rc = stat(val, &sb);
    if (rc == 0 && S_ISDIR(sb.st_mode))
        return true;
    mieb_cli_bad_value(cmd, opt, val, rc == 0 ? "not a folder" : "no such folder");
    return false;
}

bool mieb_cli_out_dir(const char *cmd, const char *opt, const char *val)
{
    struct stat sb;
    if (!mieb_cli_path(cmd, opt, val))
        return false;
    /* absent is fine (it is created); anything but a folder would fail only after the scoring */
    if (stat(val, &sb) != 0 || S_ISDIR(sb.st_mode))
        return true;
    mieb_cli_bad_value(cmd, opt, val, "exists and is not a folder");
    return false;
}

bool mieb_cli_alpha(const char *cmd, const char *opt, const char *val, void *field)
{
    double *alpha = field;
    if (mieb_cli_parse_real(val, 0.0, 1.0, alpha) && *alpha > 0.0 && *alpha < 1.0)
        return true;
    mieb_cli_bad_value(cmd, opt, val, "a number between 0 and 1");
    return false;
}
