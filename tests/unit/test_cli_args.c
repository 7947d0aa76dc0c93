/*
 * test_cli_args.c - host/cli/cli_args.c, the option values every command checks: sizes
 * (K/M/G/T as powers of 1024, the minimum, nothing at or above 2^64, no nan, inf, hex,
 * blanks or signs), reals and integers read strictly, choices. The refusals print one line
 * each on stderr; that is expected output here.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "cli/commands.h"

static void check_sizes(void)
{
    static const struct { const char *s; size_t want; } good[] = {
        {"4K", 4096}, {"4096", 4096}, {"512M", 512u << 20}, {"1.5G", 3u << 29}, {"8GiB", (size_t)8 << 30},
        {"8GB", (size_t)8 << 30}, {"2t", (size_t)2 << 40}, {".5M", 1u << 19}, {"1e6", 1000000},
        {"16777215T", (size_t)16777215 << 40},
    };
    static const char *const bad[] = {"nan", "NaN", "inf", "1e30", "0.4", "4095", "0", "-1", "+8G", " 8G", "8G ",
                                      "0x1p40", "8Q", "8iB", "1e", "", ".", "16777216T", "18446744073709551616"};
    size_t v;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        v = 0;
        CHECK_MSG(mieb_cli_size("test", "--mem-limit", good[i].s, 4096, &v) && v == good[i].want, "%s -> %zu",
                  good[i].s, v);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = 7;
        CHECK_MSG(!mieb_cli_size("test", "--mem-limit", bad[i], 4096, &v) && v == 7, "'%s' accepted", bad[i]);
    }
}

static void check_numbers(void)
{
    double d = -1;
    long long n = -1;
    CHECK(mieb_cli_parse_real("0.05", 0, 1, &d) && d == 0.05);
    CHECK(mieb_cli_parse_real("1e-3", 0, 1, &d) && d == 1e-3);
    CHECK(!mieb_cli_parse_real("nan", 0, 1, &d) && !mieb_cli_parse_real("inf", 0, 1e308, &d));
    CHECK(!mieb_cli_parse_real("0x1p-3", 0, 1, &d) && !mieb_cli_parse_real("2", 0, 1, &d));
    CHECK(!mieb_cli_parse_real("", 0, 1, &d) && !mieb_cli_parse_real(" 1", 0, 1, &d));
    CHECK(mieb_cli_int("test", "--threads", "4096", 0, 4096, &n) && n == 4096);
    CHECK(!mieb_cli_int("test", "--threads", "1e3", 0, 4096, &n) && !mieb_cli_int("test", "--threads", "", 0, 4096, &n));
    CHECK(!mieb_cli_int("test", "--seed", "99999999999999999999", 0, INT64_MAX, &n));
}

static void check_choices_and_paths(void)
{
    static const char *const ways[] = {"always", "never", "only-missing", NULL};
    int k = -1;
    CHECK(mieb_cli_choice("test", "--overwrite-strategy", "never", ways, &k) && k == 1);
    CHECK(!mieb_cli_choice("test", "--overwrite-strategy", "", ways, &k));
    CHECK(!mieb_cli_choice("test", "--overwrite-strategy", "Never", ways, &k));
    CHECK(!mieb_cli_path("test", "--output-folder", "") && mieb_cli_path("test", "--output-folder", "x"));
    CHECK(mieb_cli_dir("test", "--task-data", ".") && !mieb_cli_dir("test", "--task-data", "no/such/folder"));
    CHECK(mieb_cli_out_dir("test", "--output-folder", "no/such/folder") && !mieb_cli_out_dir("test", "--out", ""));
}

int main(void)
{
    check_sizes();
    check_numbers();
    check_choices_and_paths();
    return check_done("test_cli_args");
}
