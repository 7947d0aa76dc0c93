/* escape.c - the one escaping rule for outside strings, and printf with it (escape.h). */
#include "escape.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Where escaped text goes: a stream, or a bounded buffer whose `len` counts everything and
   which stops storing at the first piece that does not fit, keeping of a run of plain text
   the part that fits up to a character boundary and of an escape nothing, so that a cut
   never falls inside an escape or a UTF-8 sequence. Nothing here allocates. */
struct out {
    FILE *f;
    char *dst;
    size_t cap, len, stored;
    bool full;
};

static void store(struct out *o, const char *p, size_t n, bool divisible)
{
    if (o->f) {
        fwrite(p, 1, n, o->f);
    } else if (!o->full && o->stored + n < o->cap) {
        memcpy(o->dst + o->stored, p, n);
        o->stored += n;
    } else if (!o->full) {
        size_t room = o->cap ? o->cap - 1 - o->stored : 0;
        if (divisible) {
            while (room > 0 && ((unsigned char)p[room] & 0xc0) == 0x80)
                room--; /* p[room] would start the part left out: not inside a sequence */
            if (room) {
                memcpy(o->dst + o->stored, p, room);
                o->stored += room;
            }
        }
        o->full = true;
    }
    o->len += n;
}

static void put(struct out *o, const char *p, size_t n) { store(o, p, n, true); }

static void put_hex(struct out *o, unsigned char c)
{
    static const char hex[] = "0123456789abcdef";
    char esc[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
    store(o, esc, sizeof esc, false);
}

/* Length of the valid UTF-8 sequence at s (at most n bytes) and its code point; 0 if none. */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
    size_t len;
    uint32_t c, min;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        len = 2, c = s[0] & 0x1fu, min = 0x80;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        len = 3, c = s[0] & 0x0fu, min = 0x800;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        len = 4, c = s[0] & 0x07u, min = 0x10000;
    else
        return 0;
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3fu);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0; /* overlong, beyond Unicode, or a surrogate */
    *cp = c;
    return len;
}

/* Code points that control a terminal, or reorder or break the lines it shows. */
static bool cp_is_control(uint32_t c)
{
    return (c >= 0x80 && c <= 0x9f) || c == 0x200e || c == 0x200f || c == 0x2028 || c == 0x2029 ||
           (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

static bool byte_needs_escape(unsigned char c, enum mieb_escape_mode mode)
{
    return c < 0x20 || c == 0x7f || (mode != MIEB_ESC_DISPLAY && c == '\\') || (mode == MIEB_ESC_WORD && c == ' ');
}

static void escape_into(struct out *o, const char *str, size_t n, enum mieb_escape_mode mode)
{
    const unsigned char *s = (const unsigned char *)str;
    if (n == 0 && mode == MIEB_ESC_WORD) {
        put_hex(o, 0); /* the empty id keeps its field */
        return;
    }
    size_t i = 0, run = 0; /* bytes [run, i) are copied as they are */
    while (i < n) {
        size_t step = 1;
        bool esc;
        if (s[i] < 0x80) {
            esc = byte_needs_escape(s[i], mode);
        } else {
            uint32_t cp = 0;
            step = utf8_seq(s + i, n - i, &cp);
            esc = step == 0 || cp_is_control(cp);
            if (step == 0)
                step = 1; /* a stray byte is escaped alone */
        }
        if (esc) {
            put(o, (const char *)s + run, i - run);
            for (size_t k = 0; k < step; k++)
                put_hex(o, s[i + k]);
            run = i + step;
        }
        i += step;
    }
    put(o, (const char *)s + run, n - run);
}

static size_t finish(struct out *o)
{
    if (!o->f && o->cap)
        o->dst[o->stored] = '\0';
    return o->len;
}

size_t mieb_escape(char *dst, size_t cap, const char *s, size_t n, enum mieb_escape_mode mode)
{
    struct out o = {.dst = dst, .cap = cap};
    if (!s)
        s = "(null)", n = (size_t)-1;
    escape_into(&o, s, n == (size_t)-1 ? strlen(s) : n, mode);
    return finish(&o);
}

bool mieb_has_control(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t n = strlen(str);
    for (size_t i = 0; i < n;) {
        uint32_t cp = s[i];
        size_t step = s[i] < 0x80 ? 1 : utf8_seq(s + i, n - i, &cp);
        if (step == 0)
            step = 1, cp = 0x20; /* not UTF-8: not a control */
        if (cp < 0x20 || cp == 0x7f || cp_is_control(cp))
            return true;
        i += step;
    }
    return false;
}

void mieb_escape_put(FILE *f, const char *s, enum mieb_escape_mode mode)
{
    struct out o = {.f = f};
    escape_into(&o, s ? s : "(null)", s ? strlen(s) : 6, mode);
}

/* ---- printf with escaped %s ---- */

struct spec {
    char text[32]; /* the conversion as printf reads it, '*' kept */
    bool left, star_w, star_p, has_p;
    int width, prec;
    char len[3], conv;
};

/* Parse the conversion at fmt (just after '%'); returns the character after it, or NULL
   when it is not one this formatter takes (the rest of the format is then written as is). */
static const char *parse_spec(const char *fmt, struct spec *sp)
{
    const char *p = fmt;
    memset(sp, 0, sizeof *sp);
    while (*p && strchr("-+ #0'", *p))
        sp->left |= *p++ == '-';
    if (*p == '*')
        sp->star_w = true, p++;
    else
        while (*p >= '0' && *p <= '9')
            sp->width = sp->width * 10 + (*p++ - '0');
    if (*p == '.') {
        sp->has_p = true, p++;
        if (*p == '*')
            sp->star_p = true, p++;
        else
            while (*p >= '0' && *p <= '9')
                sp->prec = sp->prec * 10 + (*p++ - '0');
    }
    size_t nl = 0;
    while (*p && strchr("hlLzjt", *p) && nl < 2)
        sp->len[nl++] = *p++;
    if (!*p || !strchr("diouxXcsfFeEgGaAp%", *p))
        return NULL;
    sp->conv = *p++;
    size_t n = (size_t)(p - fmt);
    if (n + 2 > sizeof sp->text)
        return NULL;
    sp->text[0] = '%';
    memcpy(sp->text + 1, fmt, n);
    sp->text[n + 1] = '\0';
    return p;
}

static void pad(struct out *o, int n)
{
    while (n-- > 0)
        put(o, " ", 1);
}

/* %s: the argument's first prec bytes (when given), escaped, then padded to the width
   (a negative width, from '*', justifies left as printf does). */
static void put_string(struct out *o, const struct spec *sp, int width, int prec, const char *s)
{
    if (!s)
        s = "(null)";
    size_t n = sp->has_p && prec >= 0 ? strnlen(s, (size_t)prec) : strlen(s);
    struct out count = {.cap = 0};
    escape_into(&count, s, n, MIEB_ESC_DISPLAY);
    bool left = sp->left || width < 0;
    size_t w = width < 0 ? (size_t)-(long)width : (size_t)width;
    int fill = w > count.len ? (int)(w - count.len) : 0;
    if (!left)
        pad(o, fill);
    escape_into(o, s, n, MIEB_ESC_DISPLAY);
    if (left)
        pad(o, fill);
}

#define PRINT_ONE(value)                                                                                   \
    do {                                                                                                   \
        if (sp.star_w && sp.star_p)                                                                        \
            k = snprintf(buf, sizeof buf, sp.text, width, prec, value);                                    \
        else if (sp.star_w)                                                                                \
            k = snprintf(buf, sizeof buf, sp.text, width, value);                                          \
        else if (sp.star_p)                                                                                \
            k = snprintf(buf, sizeof buf, sp.text, prec, value);                                           \
        else                                                                                               \
            k = snprintf(buf, sizeof buf, sp.text, value);                                                 \
    } while (0)

/* Every conversion but %s, through snprintf with the argument of the type it names. */
static void put_other(struct out *o, const struct spec *sp_in, int width, int prec, va_list *ap)
{
    struct spec sp = *sp_in;
    char buf[512];
    int k = 0;
    bool l = sp.len[0] == 'l' && !sp.len[1], ll = sp.len[0] == 'l' && sp.len[1] == 'l';
    char m = sp.len[0];
    switch (sp.conv) {
    case 'd':
    case 'i':
        if (ll) PRINT_ONE(va_arg(*ap, long long));
        else if (l) PRINT_ONE(va_arg(*ap, long));
        else if (m == 'z' || m == 't') PRINT_ONE(va_arg(*ap, ptrdiff_t));
        else if (m == 'j') PRINT_ONE(va_arg(*ap, intmax_t));
        else PRINT_ONE(va_arg(*ap, int));
        break;
    case 'o':
    case 'u':
    case 'x':
    case 'X':
        if (ll) PRINT_ONE(va_arg(*ap, unsigned long long));
        else if (l) PRINT_ONE(va_arg(*ap, unsigned long));
        else if (m == 'z' || m == 't') PRINT_ONE(va_arg(*ap, size_t));
        else if (m == 'j') PRINT_ONE(va_arg(*ap, uintmax_t));
        else PRINT_ONE(va_arg(*ap, unsigned));
        break;
    case 'c': {
        char c = (char)va_arg(*ap, int);
        char one[2] = {c, '\0'};
        sp.has_p = false;
        put_string(o, &sp, width, -1, one);
        return;
    }
    case 'p':
        PRINT_ONE(va_arg(*ap, void *));
        break;
    case '%':
        put(o, "%", 1);
        return;
    default: /* floating point */
        if (m == 'L') PRINT_ONE(va_arg(*ap, long double));
        else PRINT_ONE(va_arg(*ap, double));
        break;
    }
    if (k > 0)
        put(o, buf, (size_t)k < sizeof buf ? (size_t)k : sizeof buf - 1);
}

static void format_into(struct out *o, const char *fmt, va_list ap_in)
{
    va_list ap;
    va_copy(ap, ap_in);
    while (*fmt) {
        const char *pct = strchr(fmt, '%');
        if (!pct) {
            put(o, fmt, strlen(fmt));
            break;
        }
        put(o, fmt, (size_t)(pct - fmt));
        struct spec sp;
        const char *next = parse_spec(pct + 1, &sp);
        if (!next) {
            put(o, pct, strlen(pct));
            break;
        }
        int width = sp.star_w ? va_arg(ap, int) : sp.width;
        int prec = sp.star_p ? va_arg(ap, int) : sp.prec;
        if (sp.conv == 's')
            put_string(o, &sp, width, prec, va_arg(ap, const char *));
        else
            put_other(o, &sp, width, prec, &ap);
        fmt = next;
    }
    va_end(ap);
}

int mieb_vsnprintf_esc(char *dst, size_t cap, const char *fmt, va_list ap)
{
    struct out o = {.dst = dst, .cap = cap};
    format_into(&o, fmt, ap);
    return (int)finish(&o);
}

int mieb_snprintf_esc(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = mieb_vsnprintf_esc(dst, cap, fmt, ap);
    va_end(ap);
    return n;
}

int mieb_vfprintf_esc(FILE *f, const char *fmt, va_list ap)
{
    struct out o = {.f = f};
    format_into(&o, fmt, ap);
    return ferror(f) ? -1 : (int)o.len;
}

int mieb_fprintf_esc(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = mieb_vfprintf_esc(f, fmt, ap);
    va_end(ap);
    return n;
}

int mieb_printf_esc(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = mieb_vfprintf_esc(stdout, fmt, ap);
    va_end(ap);
    return n;
}
