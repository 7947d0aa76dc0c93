/* json_strict.c - JSON read as Python's json module reads it (json_strict.h). */
#include "json_strict.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fileutil.h"
#include "json_alloc.h"
#include "json_py.h"

struct scan {
    const unsigned char *s;
    size_t n, i;
    char *why;
    size_t whyn;
};

/* Record what is wrong at byte `at`, with its line and column (1-based, in bytes). */
static bool fail_at(struct scan *sc, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail_at(struct scan *sc, size_t at, const char *fmt, ...)
{
    char what[200];
    size_t line = 1, col = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    for (size_t k = 0; k < at && k < sc->n; k++, col++)
        if (sc->s[k] == '\n')
            line++, col = 0;
    snprintf(sc->why, sc->whyn, "(line %zu, column %zu, byte %zu): %s", line, col, at, what);
    return false;
}

static void skip_ws(struct scan *sc)
{
    while (sc->i < sc->n && strchr(" \t\n\r", sc->s[sc->i]) && sc->s[sc->i])
        sc->i++;
}

/* One UTF-8 sequence at s[i] (a byte >= 0x80): shortest form, no surrogate, at most U+10FFFF. */
static bool utf8_seq(struct scan *sc)
{
    const unsigned char *s = sc->s;
    size_t i = sc->i, len;
    unsigned c = s[i], cp;
    if (c >= 0xc2 && c <= 0xdf)
        len = 1, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        len = 2, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 3, cp = c & 0x07;
    else
        return fail_at(sc, i, "byte 0x%02x is not UTF-8", c);
    for (size_t k = 1; k <= len; k++) {
        if (i + k >= sc->n || (s[i + k] & 0xc0) != 0x80)
            return fail_at(sc, i, "byte 0x%02x starts a UTF-8 sequence that is cut short (not UTF-8)", c);
        cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    if ((len == 2 && cp < 0x800) || (len == 3 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
        return fail_at(sc, i, "bytes that are not UTF-8 (an overlong form, a surrogate or beyond U+10FFFF)");
    sc->i = i + len + 1;
    return true;
}

/* The value of the 4 hex digits at s[i], or -1. */
static long hex4(const struct scan *sc, size_t i)
{
    long v = 0;
    if (i + 4 > sc->n)
        return -1;
    for (size_t k = i; k < i + 4; k++) {
        unsigned c = sc->s[k];
        int d = c >= '0' && c <= '9' ? (int)c - '0' : c >= 'a' && c <= 'f' ? (int)c - 'a' + 10
                : c >= 'A' && c <= 'F' ? (int)c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* A \u escape at s[i]; a high surrogate must be followed by a low one (the pair is one character). */
static bool u_escape(struct scan *sc)
{
    size_t at = sc->i;
    long u = hex4(sc, at + 2);
    if (u < 0)
        return fail_at(sc, at, "\\u needs four hex digits");
    if (u == 0)
        return fail_at(sc, at, "\\u0000 (NUL) inside a string: C code reads the string only up to it, Python "
                               "keeps the rest");
    if (u >= 0xdc00 && u <= 0xdfff)
        return fail_at(sc, at, "\\u%04lx is a lone UTF-16 surrogate (no character: Python reads it but cannot "
                               "write it as UTF-8)", u);
    if (u >= 0xd800 && u <= 0xdbff) {
        long lo = at + 7 < sc->n && sc->s[at + 6] == '\\' && sc->s[at + 7] == 'u' ? hex4(sc, at + 8) : -1;
        if (lo < 0xdc00 || lo > 0xdfff)
            return fail_at(sc, at, "\\u%04lx is a lone UTF-16 surrogate (no character: Python reads it but "
                                   "cannot write it as UTF-8)", u);
        sc->i = at + 12;
        return true;
    }
    sc->i = at + 6;
    return true;
}

static bool string(struct scan *sc)
{
    size_t start = sc->i++;
    for (;;) {
        if (sc->i >= sc->n)
            return fail_at(sc, start, "a string that never ends");
        unsigned c = sc->s[sc->i];
        if (c == '"') {
            sc->i++;
            return true;
        }
        if (c < 0x20)
            return fail_at(sc, sc->i, "a raw control character (0x%02x) inside a string (Python refuses it; "
                                      "write it as an escape)", c);
        if (c >= 0x80) {
            if (!utf8_seq(sc))
                return false;
        } else if (c != '\\') {
            sc->i++;
        } else if (sc->i + 1 < sc->n && sc->s[sc->i + 1] == 'u') {
            if (!u_escape(sc))
                return false;
        } else if (sc->i + 1 < sc->n && sc->s[sc->i + 1] && strchr("\"\\/bfnrt", sc->s[sc->i + 1])) {
            sc->i += 2;
        } else {
            return fail_at(sc, sc->i, "an invalid escape in a string");
        }
    }
}

static bool is_digit(const struct scan *sc) { return sc->i < sc->n && sc->s[sc->i] >= '0' && sc->s[sc->i] <= '9'; }

static bool digits(struct scan *sc, const char *after)
{
    if (!is_digit(sc))
        return fail_at(sc, sc->i, "a number needs digits after %s", after);
    while (is_digit(sc))
        sc->i++;
    return true;
}

/* JSON's number grammar, which Python follows: no leading zeros, no bare '.' or '+'. */
static bool number(struct scan *sc)
{
    size_t start = sc->i;
    if (sc->s[sc->i] == '-')
        sc->i++;
    if (sc->i < sc->n && sc->s[sc->i] == '0') {
        sc->i++;
        if (is_digit(sc))
            return fail_at(sc, start, "a number with a leading zero (Python refuses it, C reads it)");
    } else if (!digits(sc, "its sign")) {
        return false;
    }
    if (sc->i < sc->n && sc->s[sc->i] == '.') {
        sc->i++;
        if (!digits(sc, "'.'"))
            return false;
    }
    if (sc->i < sc->n && (sc->s[sc->i] == 'e' || sc->s[sc->i] == 'E')) {
        sc->i++;
        if (sc->i < sc->n && (sc->s[sc->i] == '+' || sc->s[sc->i] == '-'))
            sc->i++;
        if (!digits(sc, "its exponent"))
            return false;
    }
    return true;
}

static bool literal(struct scan *sc)
{
    static const char *const words[] = {"true", "false", "null", "NaN", "Infinity", "-Infinity"};
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++) {
        size_t l = strlen(words[k]);
        if (sc->n - sc->i >= l && !memcmp(sc->s + sc->i, words[k], l)) {
            sc->i += l;
            return true;
        }
    }
    if (sc->s[sc->i] == '-' || (sc->s[sc->i] >= '0' && sc->s[sc->i] <= '9'))
        return number(sc);
    return fail_at(sc, sc->i, "expected a value");
}

static bool value(struct scan *sc, int depth);

/* An object or array at s[i], `depth` levels deep counting itself. */
static bool container(struct scan *sc, int depth)
{
    bool obj = sc->s[sc->i] == '{';
    unsigned char close = obj ? '}' : ']';
    if (depth > MIEB_JSON_MAX_DEPTH)
        return fail_at(sc, sc->i, "nested more than %d levels deep", MIEB_JSON_MAX_DEPTH);
    sc->i++;
    skip_ws(sc);
    if (sc->i < sc->n && sc->s[sc->i] == close) {
        sc->i++;
        return true;
    }
    for (;;) {
        if (obj) {
            skip_ws(sc);
            if (sc->i >= sc->n || sc->s[sc->i] != '"')
                return fail_at(sc, sc->i, "expected a key (a string in double quotes)");
            if (!string(sc))
                return false;
            skip_ws(sc);
            if (sc->i >= sc->n || sc->s[sc->i] != ':')
                return fail_at(sc, sc->i, "expected ':' after a key");
            sc->i++;
        }
        if (!value(sc, depth))
            return false;
        skip_ws(sc);
        if (sc->i < sc->n && sc->s[sc->i] == ',') {
            sc->i++;
            continue;
        }
        if (sc->i < sc->n && sc->s[sc->i] == close) {
            sc->i++;
            return true;
        }
        return fail_at(sc, sc->i, "expected ',' or '%c'", close);
    }
}

static bool value(struct scan *sc, int depth)
{
    skip_ws(sc);
    if (sc->i >= sc->n)
        return fail_at(sc, sc->i, "the text ends where a value should be");
    unsigned c = sc->s[sc->i];
    if (c == '{' || c == '[')
        return container(sc, depth + 1);
    if (c == '"')
        return string(sc);
    return literal(sc);
}

/* The text check alone: true when Python and cJSON read text the same way, else false
    with the reason (and its line and column) in why. Duplicate keys are not seen here. */
static bool mieb_json_text_ok(const char *text, size_t len, char *why, size_t whyn)
{
    struct scan sc = {(const unsigned char *)text, len, 0, why, whyn};
    if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
        return fail_at(&sc, 0, "a UTF-8 byte order mark (Python's json refuses it, cJSON skips it: save the "
                               "file without one)");
    if (!value(&sc, 0))
        return false;
    skip_ws(&sc);
    if (sc.i < sc.n)
        return fail_at(&sc, sc.i, "more text after the JSON value (Python refuses it, cJSON ignores it)");
    return true;
}

/* ---- duplicate keys ---- */

static int cmp_key(const void *a, const void *b)
{
    return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* `path` (the JSON pointer of `it`, for the message) extended by one step into buf. */
static void path_step(char *buf, size_t n, const char *path, const cJSON *it, int index)
{
    if (it->string)
        snprintf(buf, n, "%s/%.40s", path[1] ? path : "", it->string);
    else
        snprintf(buf, n, "%s/%d", path[1] ? path : "", index);
}

/* The first key given twice in one object, or NULL; *oom when the sort could not be made. */
static const char *repeated_key(const cJSON *obj, bool *oom)
{
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, obj) n++;
    if (n < 2)
        return NULL;
    const cJSON **keys = malloc((size_t)n * sizeof *keys);
    if (!keys) {
        *oom = true;
        return NULL;
    }
    n = 0;
    cJSON_ArrayForEach(c, obj) keys[n++] = c;
    qsort(keys, (size_t)n, sizeof *keys, cmp_key); /* n log n: a 16 MiB object may hold a million keys */
    const char *dup = NULL;
    for (int k = 1; k < n && !dup; k++)
        if (!strcmp(keys[k - 1]->string, keys[k]->string))
            dup = keys[k]->string;
    free(keys);
    return dup;
}

static bool keys_unique(const cJSON *it, const char *path, char *why, size_t whyn)
{
    bool oom = false;
    const char *dup = cJSON_IsObject(it) ? repeated_key(it, &oom) : NULL;
    if (oom) {
        snprintf(why, whyn, "out of memory checking the object at %s for repeated keys", path);
        return false;
    }
    if (dup) {
        snprintf(why, whyn, "key \"%.80s\" appears twice in the object at %s (Python's json keeps the last value, "
                            "cJSON the first)", dup, path);
        return false;
    }
    int index = 0;
    for (const cJSON *c = it->child; c; c = c->next, index++) {
        char sub[256];
        path_step(sub, sizeof sub, path, c, index);
        if (c->child && !keys_unique(c, sub, why, whyn))
            return false;
    }
    return true;
}

/* The duplicate-key check on a parsed tree: true, or false with the key and its object in why. */
static bool mieb_json_keys_unique(const cJSON *root, char *why, size_t whyn) { return keys_unique(root, "/", why, whyn); }

/* ---- files ---- */

void mieb_json_file_free(struct mieb_json_file *f)
{
    cJSON_Delete(f->root);
    free(f->text);
    memset(f, 0, sizeof *f);
}

/* cJSON's tree of a checked text, with Python's NaN and Infinity rewritten for it. */
static mieb_status parse_checked(const char *path, struct mieb_json_file *f)
{
    char *strict = NULL;
    size_t slen = 0;
    if (mieb_json_py_to_strict(f->text, f->len, &strict, &slen) != MIEB_OK)
        return mieb_fail(MIEB_ERR_OOM, "%s: out of memory parsing it", path);
    unsigned long jf = mieb_json_alloc_failures();
    f->root = cJSON_ParseWithLength(strict, slen);
    free(strict);
    if (f->root)
        return MIEB_OK;
    if (mieb_json_alloc_failures() != jf)
        return mieb_fail(MIEB_ERR_OOM, "%s: out of memory parsing it", path);
    return mieb_fail(MIEB_ERR_INTERNAL, "%s: cJSON refuses a text that passed the JSON check", path);
}

mieb_status mieb_json_read_strict(const char *path, size_t max_bytes, mieb_status bad, struct mieb_json_file *out)
{
    char why[400];
    memset(out, 0, sizeof *out);
    MIEB_TRY(mieb_read_file(path, max_bytes, &out->text, &out->len));
    mieb_status st = MIEB_OK;
    if (!mieb_json_text_ok(out->text, out->len, why, sizeof why))
        st = mieb_fail(bad, "%s: not valid JSON as Python reads it %s", path, why);
    else if ((st = parse_checked(path, out)) == MIEB_OK && !mieb_json_keys_unique(out->root, why, sizeof why))
        st = strncmp(why, "out of memory", 13) ? mieb_fail(bad, "%s: %s", path, why)
                                                 : mieb_fail(MIEB_ERR_OOM, "%s: %s", path, why);
    if (st != MIEB_OK)
        mieb_json_file_free(out);
    return st;
}
