/* json_py.c - Python-compatible JSON output (json.dump indent=2, ensure_ascii), and Python's JSON text made readable by cJSON. */
#include "json_py.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/pyfloat.h"

mieb_status mieb_buf_append(struct mieb_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p)
            return mieb_fail(MIEB_ERR_OOM, "json buffer of %zu bytes", cap);
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return MIEB_OK;
}

void mieb_buf_free(struct mieb_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

static mieb_status put(struct mieb_buf *b, const char *s) { return mieb_buf_append(b, s, strlen(s)); }

/* Decode one UTF-8 sequence; invalid bytes are passed through as U+FFFD like Python's
   surrogateescape would not apply here (our strings come from HDF5 UTF-8 data). */
static uint32_t utf8_next(const unsigned char **p)
{
    const unsigned char *s = *p;
    uint32_t c = s[0];
    int n = 0;
    if (c < 0x80) n = 0;
    else if ((c & 0xE0) == 0xC0) { c &= 0x1F; n = 1; }
    else if ((c & 0xF0) == 0xE0) { c &= 0x0F; n = 2; }
    else if ((c & 0xF8) == 0xF0) { c &= 0x07; n = 3; }
    else { *p = s + 1; return 0xFFFD; }
    for (int i = 1; i <= n; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *p = s + 1;
            return 0xFFFD;
        }
        c = (c << 6) | (s[i] & 0x3F);
    }
    *p = s + n + 1;
    return c;
}

static mieb_status put_string(struct mieb_buf *b, const char *str)
{
    const unsigned char *p = (const unsigned char *)str;
    char esc[16];
    MIEB_TRY(put(b, "\""));
    while (*p) {
        uint32_t c = utf8_next(&p);
        switch (c) {
        case '"': MIEB_TRY(put(b, "\\\"")); continue;
        case '\\': MIEB_TRY(put(b, "\\\\")); continue;
        case '\n': MIEB_TRY(put(b, "\\n")); continue;
        case '\r': MIEB_TRY(put(b, "\\r")); continue;
        case '\t': MIEB_TRY(put(b, "\\t")); continue;
        case '\b': MIEB_TRY(put(b, "\\b")); continue;
        case '\f': MIEB_TRY(put(b, "\\f")); continue;
        default: break;
        }
        if (c >= 0x20 && c < 0x7F) {
            char ch = (char)c;
            MIEB_TRY(mieb_buf_append(b, &ch, 1));
        } else if (c < 0x10000) {
            snprintf(esc, sizeof esc, "\\u%04x", (unsigned)c);
            MIEB_TRY(put(b, esc));
        } else {
            uint32_t v = c - 0x10000;
            snprintf(esc, sizeof esc, "\\u%04x\\u%04x", (unsigned)(0xD800 | (v >> 10)),
                     (unsigned)(0xDC00 | (v & 0x3FF)));
            MIEB_TRY(put(b, esc));
        }
    }
    return put(b, "\"");
}

static mieb_status put_indent(struct mieb_buf *b, int level)
{
    MIEB_TRY(put(b, "\n"));
    for (int i = 0; i < level; i++)
        MIEB_TRY(put(b, "  "));
    return MIEB_OK;
}

static mieb_status dump(const cJSON *it, struct mieb_buf *b, int level)
{
    char num[64];
    if (cJSON_IsNull(it))
        return put(b, "null");
    if (cJSON_IsTrue(it))
        return put(b, "true");
    if (cJSON_IsFalse(it))
        return put(b, "false");
    if (cJSON_IsNumber(it)) {
        mieb_py_repr(it->valuedouble, num, sizeof num);
        return put(b, num);
    }
    if (cJSON_IsString(it))
        return put_string(b, it->valuestring);
    if (cJSON_IsArray(it) || cJSON_IsObject(it)) {
        int obj = cJSON_IsObject(it);
        const cJSON *c = it->child;
        if (!c)
            return put(b, obj ? "{}" : "[]");
        MIEB_TRY(put(b, obj ? "{" : "["));
        for (; c; c = c->next) {
            MIEB_TRY(put_indent(b, level + 1));
            if (obj) {
                MIEB_TRY(put_string(b, c->string ? c->string : ""));
                MIEB_TRY(put(b, ": "));
            }
            MIEB_TRY(dump(c, b, level + 1));
            if (c->next)
                MIEB_TRY(put(b, ","));
        }
        MIEB_TRY(put_indent(b, level));
        return put(b, obj ? "}" : "]");
    }
    return mieb_fail(MIEB_ERR_INTERNAL, "json: unknown cJSON node type %d", it->type);
}

mieb_status mieb_json_py_dump(const cJSON *item, struct mieb_buf *out) { return dump(item, out, 0); }

static void round_rec(cJSON *item, const char *key, int ndigits, mieb_round_fn fn)
{
    if (cJSON_IsNumber(item)) {
        cJSON_SetNumberValue(item, fn(key, item->valuedouble, ndigits));
    } else if (cJSON_IsArray(item) || cJSON_IsObject(item)) {
        for (cJSON *c = item->child; c; c = c->next)
            round_rec(c, cJSON_IsObject(item) ? c->string : key, ndigits, fn);
    }
}

void mieb_json_round_numbers(cJSON *item, int ndigits, mieb_round_fn fn) { round_rec(item, NULL, ndigits, fn); }

cJSON *mieb_json_num_or_null(double x)
{
    char buf[40];
    if (!isfinite(x))
        return cJSON_CreateNull();
    mieb_py_repr(x, buf, sizeof buf);
    return cJSON_CreateRaw(buf);
}

mieb_status mieb_json_py_to_strict(const char *text, size_t len, char **out, size_t *out_len)
{
    /* worst case: every "NaN" (3) -> "null" (4) */
    char *o = malloc(len + len / 3 + 8);
    size_t j = 0;
    bool in_str = false;
    if (!o)
        return mieb_fail(MIEB_ERR_OOM, "json text of %zu bytes", len);
    for (size_t i = 0; i < len;) {
        char c = text[i];
        if (in_str) {
            o[j++] = c;
            if (c == '\\' && i + 1 < len) {
                o[j++] = text[i + 1];
                i += 2;
                continue;
            }
            if (c == '"')
                in_str = false;
            i++;
        } else if (c == '"') {
            in_str = true;
            o[j++] = c;
            i++;
        } else if (len - i >= 3 && !memcmp(text + i, "NaN", 3)) {
            memcpy(o + j, "null", 4);
            j += 4;
            i += 3;
        } else if (len - i >= 8 && !memcmp(text + i, "Infinity", 8)) {
            memcpy(o + j, "1e999", 5); /* a preceding '-' is copied as is */
            j += 5;
            i += 8;
        } else {
            o[j++] = c;
            i++;
        }
    }
    o[j] = '\0';
    *out = o;
    *out_len = j;
    return MIEB_OK;
}
