/* html_writer.c - escaping formatted output for the HTML report (see html_writer.h). */
#include "html_writer.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../core/pyfloat.h"

static void put(struct mieb_html *h, const char *s, size_t n)
{
    if (h->st == MIEB_OK && n)
        h->st = mieb_buf_append(&h->buf, s, n);
}

/* Append a string HTML-escaped (the %s conversion). */
static void mieb_html_text(struct mieb_html *h, const char *s)
{
    if (!s)
        return;
    const char *run = s; /* bytes that need no escaping are copied in runs */
    for (const char *p = s; *p; p++) {
        const char *rep = NULL;
        switch (*p) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default:
            if ((unsigned char)*p < 0x20 && *p != '\t' && *p != '\n')
                rep = " ";
        }
        if (rep) {
            put(h, run, (size_t)(p - run));
            put(h, rep, strlen(rep));
            run = p + 1;
        }
    }
    put(h, run, strlen(run));
}

void mieb_html_fmt(struct mieb_html *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const char *run = fmt;
    for (const char *p = fmt; *p; p++) {
        if (*p != '%')
            continue;
        put(h, run, (size_t)(p - run));
        const char *spec = p++; /* '%' then flags, width, precision, length, conversion */
        while (*p && strchr("-+ #0123456789.lz", *p))
            p++;
        char conv = *p, tmp[64], one[24];
        size_t sl = (size_t)(p - spec) + 1;
        if (!conv || sl >= sizeof one)
            break; /* a malformed format is a bug in this program; stop rather than misread args */
        memcpy(one, spec, sl);
        one[sl] = '\0';
        switch (conv) {
        case 's': mieb_html_text(h, va_arg(ap, const char *)); break;
        case 'R': {
            const char *s = va_arg(ap, const char *);
            if (s)
                put(h, s, strlen(s));
            break;
        }
        case 'v': {
            double x = va_arg(ap, double);
            if (isnan(x))
                snprintf(tmp, sizeof tmp, "nan");
            else
                mieb_py_repr(x, tmp, sizeof tmp);
            put(h, tmp, strlen(tmp));
            break;
        }
        case 'd':
        case 'u':
            if (strstr(one, "zu"))
                snprintf(tmp, sizeof tmp, one, va_arg(ap, size_t));
            else if (strchr(one, 'l'))
                snprintf(tmp, sizeof tmp, one, va_arg(ap, long));
            else
                snprintf(tmp, sizeof tmp, one, va_arg(ap, int));
            put(h, tmp, strlen(tmp));
            break;
        case 'f':
        case 'g':
        case 'e':
            snprintf(tmp, sizeof tmp, one, va_arg(ap, double));
            put(h, tmp, strlen(tmp));
            break;
        case '%': put(h, "%", 1); break;
        default: break; /* unknown conversion: a bug in this program; print nothing */
        }
        run = p + 1;
    }
    put(h, run, strlen(run));
    va_end(ap);
}

void mieb_html_free(struct mieb_html *h)
{
    mieb_buf_free(&h->buf);
    h->st = MIEB_OK;
}
