/* test_escape.c - the escaping printf against the C library's own printf (core/escape.h).
 *
 * Random formats of every conversion the program uses (flags, widths and precisions, '*'
 * arguments, length modifiers) with arguments that hold nothing to escape must give exactly
 * what snprintf gives; the same formats with outside strings must give snprintf's output
 * with each string replaced by its escaped form; cut buffers end on a whole piece. The
 * rule itself is checked byte for byte against tests/py/test_control_chars.py's reference
 * on the program's outputs; here its edges: every single byte, UTF-8 boundaries. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/escape.h"

static unsigned long long rng = 42;

static int esc(char *dst, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int esc(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = mieb_vsnprintf_esc(dst, cap, fmt, ap);
    va_end(ap);
    return n;
}

/* Clean arguments: the escaping printf is printf. */
static void random_formats_equal_printf(void)
{
    static const char *const flags[] = {"", "-", "0", "+", " ", "#", "-+"};
    static const char *const words[] = {"", "a", "plain text", "with\\backslash", "100%", "tabs are not here"};
    char fmt[64], want[512], got[512];
    for (int it = 0; it < 20000; it++) {
        const char *fl = flags[check_rng_u64(&rng) % 7];
        int width = (int)(check_rng_u64(&rng) % 14), prec = (int)(check_rng_u64(&rng) % 8);
        int kind = (int)(check_rng_u64(&rng) % 9), star = (int)(check_rng_u64(&rng) % 3);
        long long v = (long long)(check_rng_u64(&rng) % 2000001) - 1000000;
        double d = (check_rng_uniform(&rng) - 0.5) * 1e6 * check_rng_uniform(&rng);
        const char *w = words[check_rng_u64(&rng) % 6];
        int n1, n2;
        char p[16] = "";
        if (star == 1)
            snprintf(p, sizeof p, "%s*", fl);
        else if (star == 2)
            snprintf(p, sizeof p, "%s%d.*", fl, width);
        else
            snprintf(p, sizeof p, "%s%d.%d", fl, width, prec);
#define BOTH(conv, ...)                                                                                     \
    do {                                                                                                    \
        snprintf(fmt, sizeof fmt, "[%%%s" conv "]", p);                                                     \
        _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wformat-nonliteral\"")             \
            n1 = star ? snprintf(want, sizeof want, fmt, star == 1 ? width : prec, __VA_ARGS__)            \
                      : snprintf(want, sizeof want, fmt, __VA_ARGS__);                                     \
        n2 = star ? esc(got, sizeof got, fmt, star == 1 ? width : prec, __VA_ARGS__)                        \
                  : esc(got, sizeof got, fmt, __VA_ARGS__);                                                \
        _Pragma("GCC diagnostic pop")                                                                       \
    } while (0)
        switch (kind) {
        case 0: BOTH("d", (int)v); break;
        case 1: BOTH("lld", v); break;
        case 2: BOTH("zu", (size_t)(v < 0 ? -v : v)); break;
        case 3: BOTH("lx", (unsigned long)(v < 0 ? -v : v)); break;
        case 4: BOTH("g", d); break;
        case 5: BOTH("f", d); break;
        case 6: BOTH("e", d); break;
        case 7: BOTH("s", w); break;
        default: BOTH("ld", (long)v); break;
        }
#undef BOTH
        CHECK_MSG(n1 == n2 && !strcmp(want, got), "format %s: printf [%s] (%d), escaping printf [%s] (%d)", fmt, want,
                  n1, got, n2);
    }
    char a[64], b[64];
    snprintf(a, sizeof a, "%% %c|%5c|%-3c|%p", 'x', 'y', 'z', (void *)a);
    esc(b, sizeof b, "%% %c|%5c|%-3c|%p", 'x', 'y', 'z', (void *)a);
    CHECK_MSG(!strcmp(a, b), "[%s] vs [%s]", a, b);
}

/* Outside strings: each %s is replaced by its escaped form, widths count the escaped bytes,
   %.Ns takes N bytes of the argument before escaping. */
static void outside_strings(void)
{
    char got[256];
    esc(got, sizeof got, "task %s: id '%s' (%d)", "T\x1b[2J", "a\r\nb", 7);
    CHECK_MSG(!strcmp(got, "task T\\x1b[2J: id 'a\\x0d\\x0ab' (7)"), "[%s]", got);
    esc(got, sizeof got, "[%-8s][%8s]", "x\ty", "\x7f");
    CHECK_MSG(!strcmp(got, "[x\\x09y  ][    \\x7f]"), "[%s]", got);
    esc(got, sizeof got, "[%.2s][%.*s]", "ab\x1b", 3, "\x01\x02\x03\x04");
    CHECK_MSG(!strcmp(got, "[ab][\\x01\\x02\\x03]"), "[%s]", got);
    esc(got, sizeof got, "[%*s]", -6, "\n");
    CHECK_MSG(!strcmp(got, "[\\x0a  ]"), "[%s]", got);
    const char *volatile none = NULL;
    esc(got, sizeof got, "%s", none);
    CHECK_MSG(!strcmp(got, "(null)"), "[%s]", got);
    /* idempotent: an escaped message passed as %s stays as it is */
    char once[128], twice[128];
    esc(once, sizeof once, "%s", "\x1b]0;title\x07 \xc2\x9b \xe2\x80\xae \xff \\");
    esc(twice, sizeof twice, "%s", once);
    CHECK_MSG(!strcmp(once, twice), "[%s] then [%s]", once, twice);
    /* cut: never inside an escape, and the length is the whole one */
    char small[7];
    int n = esc(small, sizeof small, "ab%s", "\x1b" "cd");
    CHECK_MSG(n == 8 && !strcmp(small, "ab\\x1b"), "[%s] %d", small, n);
    n = esc(small, sizeof small, "abc%s", "\x1b");
    CHECK_MSG(n == 7 && !strcmp(small, "abc"), "[%s] %d", small, n);
    n = esc(small, sizeof small, "%s", "\xe6\x96\x87\xe6\x96\x87\xe6\x96\x87");
    CHECK_MSG(n == 9 && !strcmp(small, "\xe6\x96\x87\xe6\x96\x87"), "[%s] %d", small, n);
    n = esc(NULL, 0, "%s%d", "\n", 12);
    CHECK(n == 6);
    /* multi-byte text is shown as it is, and widths count its bytes as printf does */
    char want[64];
    snprintf(want, sizeof want, "[%-14s|%14s]", "Ωmega", "文档 😀");
    esc(got, sizeof got, "[%-14s|%14s]", "Ωmega", "文档 😀");
    CHECK_MSG(!strcmp(got, want), "[%s] vs [%s]", got, want);
}

/* Every single byte, in each mode. */
static void single_bytes(void)
{
    for (int c = 1; c < 256; c++) {
        char s[2] = {(char)c, 0}, out[16], want[16];
        bool control = c < 0x20 || c == 0x7f || c >= 0x80; /* a lone byte >= 0x80 is not UTF-8 */
        for (int mode = MIEB_ESC_DISPLAY; mode <= MIEB_ESC_WORD; mode++) {
            bool esc_it = control || (mode != MIEB_ESC_DISPLAY && c == '\\') || (mode == MIEB_ESC_WORD && c == ' ');
            if (esc_it)
                snprintf(want, sizeof want, "\\x%02x", c);
            else
                snprintf(want, sizeof want, "%c", c);
            mieb_escape(out, sizeof out, s, (size_t)-1, (enum mieb_escape_mode)mode);
            CHECK_MSG(!strcmp(out, want), "byte 0x%02x mode %d: [%s]", c, mode, out);
        }
        CHECK(mieb_has_control(s) == (c < 0x20 || c == 0x7f));
    }
    char out[32];
    mieb_escape(out, sizeof out, "", (size_t)-1, MIEB_ESC_WORD);
    CHECK(!strcmp(out, "\\x00"));
    mieb_escape(out, sizeof out, "", (size_t)-1, MIEB_ESC_CSV);
    CHECK(!strcmp(out, ""));
}

/* UTF-8: what is shown as it is and what is escaped. */
static void utf8_edges(void)
{
    static const struct {
        const char *in, *want;
        bool control;
    } cases[] = {
        {"\xc2\x80", "\\xc2\\x80", true},                 /* U+0080, C1 */
        {"\xc2\x9f", "\\xc2\\x9f", true},                 /* U+009F, C1 */
        {"\xc2\xa0", "\xc2\xa0", false},                   /* U+00A0 */
        {"\xe2\x80\xa8", "\\xe2\\x80\\xa8", true},         /* U+2028 */
        {"\xe2\x80\xae", "\\xe2\\x80\\xae", true},         /* U+202E */
        {"\xe2\x81\xa9", "\\xe2\\x81\\xa9", true},         /* U+2069 */
        {"\xe2\x81\xaa", "\xe2\x81\xaa", false},           /* U+206A */
        {"\xe2\x80\x8f", "\\xe2\\x80\\x8f", true},         /* U+200F */
        {"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", false},   /* U+1F600 */
        {"\xc0\xaf", "\\xc0\\xaf", false},                 /* overlong '/' */
        {"\xed\xa0\x80", "\\xed\\xa0\\x80", false},        /* a surrogate */
        {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", false}, /* beyond U+10FFFF */
        {"\xe6\x96", "\\xe6\\x96", false},                 /* cut short */
        {"\xe6\x96\x87\x80", "\xe6\x96\x87\\x80", false},  /* a stray continuation */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[64];
        mieb_escape(out, sizeof out, cases[i].in, (size_t)-1, MIEB_ESC_DISPLAY);
        CHECK_MSG(!strcmp(out, cases[i].want), "case %zu: [%s] want [%s]", i, out, cases[i].want);
        CHECK_MSG(mieb_has_control(cases[i].in) == cases[i].control, "case %zu", i);
    }
}

int main(void)
{
    random_formats_equal_printf();
    outside_strings();
    single_bytes();
    utf8_edges();
    return check_done("test_escape");
}
