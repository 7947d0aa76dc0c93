/* svg_common.c - axis ticks and label sizing shared by the report's SVG charts. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "svg_chart.h"

double mieb_svg_tick_step(double lo, double hi)
{
    double span = hi - lo;
    if (!(span > 0) || !isfinite(span))
        return 1.0;
    double raw = span / 5.0, mag = pow(10.0, floor(log10(raw))), f = raw / mag;
    double step = f < 1.5 ? 1.0 : f < 3.5 ? 2.0 : f < 7.5 ? 5.0 : 10.0;
    return step * mag;
}

double mieb_svg_text_width(const char *s)
{
    /* an average glyph of an 11 px sans-serif font is about 6 px wide, a little more for wide letters (measured on
       Chromium's rendering of task names in DejaVu Sans); UTF-8
       continuation bytes add nothing (one glyph per code point) */
    double w = 0.0;
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++)
        if ((*p & 0xC0) != 0x80)
            w += 6.3;
    return w;
}

double mieb_svg_max_width(const char *const *s, int n)
{
    double w = 0.0;
    for (int i = 0; i < n; i++) {
        double x = mieb_svg_text_width(s[i]);
        w = x > w ? x : w;
    }
    return w;
}

void mieb_svg_fmt_shown(double x, int decimals, char *buf, size_t n)
{
    if (isnan(x)) {
        snprintf(buf, n, "n/a");
        return;
    }
    snprintf(buf, n, "%.*f", decimals, x);
    if (!strcmp(buf, "-0") || (!strncmp(buf, "-0.", 3) && strspn(buf + 3, "0") == strlen(buf + 3)))
        memmove(buf, buf + 1, strlen(buf)); /* no "-0.00" */
}
