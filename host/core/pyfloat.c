/*
 * pyfloat.c - Python's round(x, n) and float repr, reproduced with glibc's exact
 * decimal conversions.
 *
 * CPython rounds and prints floats with David Gay's dtoa.c: round() asks for the
 * correctly rounded decimal string (half to even on exact ties) and reads it back with
 * strtod; repr() asks for the shortest string that reads back to the same double. glibc's
 * printf prints the exact binary value rounded half-even under the default rounding mode,
 * and its strtod is correctly rounded, so the same strings can be produced here.
 */
#include "pyfloat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CPython's float.__round__ limits: beyond them x rounds to itself or to +-0. */
#define PY_NDIGITS_MAX 323  /* (int)((DBL_MANT_DIG - DBL_MIN_EXP) * 0.30103) */
#define PY_NDIGITS_MIN -308 /* -(int)((DBL_MAX_EXP + 1) * 0.30103) */

/*
 * Negative ndigits: "%.*f" cannot round left of the point, so round the exact integer
 * part as a digit string. trunc(x) is an exact integer, so "%.0f" prints it exactly; the
 * dropped fraction only matters to tell an exact tie from a value just above it.
 */
static double round_left_of_point(double x, int m)
{
    char digits[400];
    double ip = trunc(fabs(x));
    int frac_nonzero = fabs(x) != ip;
    int len = snprintf(digits, sizeof digits, "%.0f", ip);
    /* Left-pad so the kept head has at least one digit (it may be "0"). */
    if (len <= m) {
        int pad = m + 1 - len;
        memmove(digits + pad, digits, (size_t)len + 1);
        memset(digits, '0', (size_t)pad);
        len += pad;
    }
    int head = len - m;
    const char *tail = digits + head;
    int cmp; /* tail compared with 5000...0 */
    if (tail[0] != '5') {
        cmp = tail[0] > '5' ? 1 : -1;
    } else {
        cmp = 0;
        for (int i = 1; i < m; i++) {
            if (tail[i] != '0') {
                cmp = 1;
                break;
            }
        }
        if (cmp == 0 && frac_nonzero)
            cmp = 1;
    }
    int up = cmp > 0 || (cmp == 0 && ((digits[head - 1] - '0') & 1));
    /* Build "[-]<head(+1)>e<m>" and let strtod do the final conversion. */
    char out[420];
    char *p = out;
    if (signbit(x))
        *p++ = '-';
    *p++ = '0'; /* room for a carry out of the leading digit */
    memcpy(p, digits, (size_t)head);
    p[head] = '\0';
    if (up) {
        int i = head - 1;
        while (p[i] == '9') {
            p[i] = '0';
            i--;
        }
        if (i >= 0) {
            p[i]++;
        } else {
            p[-1] = '1';
        }
    }
    snprintf(p + head, sizeof out - (size_t)(p + head - out), "e%d", m);
    return strtod(out, NULL); /* +-inf on overflow, where Python raises OverflowError */
}

double mieb_py_round(double x, int ndigits)
{
    if (!isfinite(x))
        return x;
    if (ndigits > PY_NDIGITS_MAX)
        return x;
    if (ndigits < PY_NDIGITS_MIN)
        return 0.0 * x;
    if (ndigits < 0)
        return round_left_of_point(x, -ndigits);
    /* 309 integer digits + point + 323 decimals + sign + NUL fit in 700 bytes. */
    char buf[700];
    snprintf(buf, sizeof buf, "%.*f", ndigits, x);
    return strtod(buf, NULL);
}

/*
 * Shortest digits of |x| (x finite, nonzero): the fewest significant digits whose decimal
 * value reads back as x, and among those the one nearest to x, as dtoa mode 0 returns.
 * The nearest p-digit decimal (printf "%.*e") is tried first. At a power of two the
 * rounding interval is narrower below x than above, so a farther p-digit neighbour can
 * round-trip when the nearest does not: the neighbour on the other side is tried too.
 * Writes the digits without trailing zeros and returns decpt (x = 0.DIGITS * 10^decpt).
 */
static int shortest_digits(double ax, char *digits)
{
    char s[48];
    for (int p = 1; p <= 17; p++) {
        snprintf(s, sizeof s, "%.*e", p - 1, ax);
        double back = strtod(s, NULL);
        /* Parse "d.ddd e+XX" into an integer mantissa of p digits and an exponent. */
        char mant[24];
        int k = 0;
        const char *c = s;
        for (; *c && *c != 'e'; c++)
            if (*c != '.')
                mant[k++] = *c;
        mant[k] = '\0';
        int e10 = atoi(c + 1);
        if (back != ax) {
            unsigned long long m = strtoull(mant, NULL, 10);
            m = back < ax ? m + 1 : m - 1;
            char alt[48];
            snprintf(alt, sizeof alt, "%llue%d", m, e10 - (p - 1));
            if (strtod(alt, NULL) != ax)
                continue;
            /* Renormalise: m may have gained (10^p) or lost (99..9) a digit. */
            snprintf(mant, sizeof mant, "%llu", m);
            k = (int)strlen(mant);
            e10 = e10 + (k - p);
        }
        while (k > 1 && mant[k - 1] == '0')
            k--;
        memcpy(digits, mant, (size_t)k);
        digits[k] = '\0';
        return e10 + 1;
    }
    /* 17 significant digits always round-trip; not reached. */
    snprintf(s, sizeof s, "%.16e", ax);
    int k = 0;
    const char *c = s;
    for (; *c && *c != 'e'; c++)
        if (*c != '.')
            digits[k++] = *c;
    while (k > 1 && digits[k - 1] == '0')
        k--;
    digits[k] = '\0';
    return atoi(c + 1) + 1;
}

int mieb_py_repr(double x, char *buf, size_t n)
{
    char out[40];
    char *p = out;
    if (isnan(x)) {
        strcpy(out, "NaN");
    } else if (isinf(x)) {
        strcpy(out, x > 0 ? "Infinity" : "-Infinity");
    } else if (x == 0.0) {
        strcpy(out, signbit(x) ? "-0.0" : "0.0");
    } else {
        char digits[24];
        int decpt = shortest_digits(fabs(x), digits);
        int nd = (int)strlen(digits);
        if (x < 0)
            *p++ = '-';
        if (decpt <= -4 || decpt > 16) {
            /* d[.ddd]e+XX, no ".0" for a single digit (repr(1e-05) == '1e-05'). */
            *p++ = digits[0];
            if (nd > 1) {
                *p++ = '.';
                memcpy(p, digits + 1, (size_t)nd - 1);
                p += nd - 1;
            }
            sprintf(p, "e%+.02d", decpt - 1);
        } else if (decpt <= 0) {
            *p++ = '0';
            *p++ = '.';
            for (int i = 0; i < -decpt; i++)
                *p++ = '0';
            memcpy(p, digits, (size_t)nd);
            p[nd] = '\0';
        } else if (decpt >= nd) {
            memcpy(p, digits, (size_t)nd);
            p += nd;
            for (int i = nd; i < decpt; i++)
                *p++ = '0';
            strcpy(p, ".0");
        } else {
            memcpy(p, digits, (size_t)decpt);
            p += decpt;
            *p++ = '.';
            memcpy(p, digits + decpt, (size_t)(nd - decpt));
            p[nd - decpt] = '\0';
        }
    }
    size_t len = strlen(out);
    if (buf == NULL || n <= len) {
        if (buf != NULL && n > 0)
            buf[0] = '\0';
        return -1;
    }
    memcpy(buf, out, len + 1);
    return (int)len;
}
