/**
 * json_py.h - serialise a cJSON tree exactly as Python's json.dump(obj, f, indent=2)
 * does with its defaults (ensure_ascii, ", " / ": " separators, NaN and Infinity
 * literals), so result files are byte-identical to the ones mteb writes.
 * Every number is written as a Python float (repr: shortest round-trip digits), since
 * every number in an mteb TaskResult is a float. Such text read back goes through
 * mieb_json_py_to_strict first, which turns the literals cJSON refuses into ones it reads.
 */
#ifndef MIEB_JSON_JSON_PY_H
#define MIEB_JSON_JSON_PY_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "../core/status.h"

/** A growable byte buffer. */
struct mieb_buf {
    char *data;
    size_t len, cap;
};
mieb_status mieb_buf_append(struct mieb_buf *b, const char *s, size_t n);
void mieb_buf_free(struct mieb_buf *b);

/** Append the serialisation of `item` (indent 2, as json.dump) to out. */
mieb_status mieb_json_py_dump(const cJSON *item, struct mieb_buf *out);

/**
 * Rounding of one value as Python's round(v, ndigits) would do it for the object mteb
 * holds under `key` (a Python float and a numpy.float64 round differently near ties).
 */
typedef double (*mieb_round_fn)(const char *key, double x, int ndigits);

/**
 * Round every number in the tree (recursively) to `ndigits`. Each number is passed to
 * `fn` with the key of the nearest enclosing object member (NULL at the top).
 */
void mieb_json_round_numbers(cJSON *item, int ndigits, mieb_round_fn fn);

/**
 * A number for a JSON report (summary, compare, the run's summary): its Python repr as a raw
 * item, since cJSON's own printing may drop the last digit; null for NaN and infinities.
 */
cJSON *mieb_json_num_or_null(double x);

/**
 * Rewrite text that Python's json wrote so cJSON can parse it: json.dump writes NaN, Infinity
 * and -Infinity literally, cJSON accepts none of them, so outside strings NaN becomes null
 * and Infinity 1e999 (a preceding '-' kept). *out is malloc'd and NUL-terminated.
 */
mieb_status mieb_json_py_to_strict(const char *text, size_t len, char **out, size_t *out_len);

#endif
