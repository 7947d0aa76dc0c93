/**
 * json_strict.h - JSON files that users hand us (model_meta.json, the task registry, the
 * benchmarks), read so that what mieb-eval validates is exactly what Python's json module
 * reads from the same bytes.
 *
 * cJSON and Python disagree on some texts, and a file validated through cJSON but read by
 * mteb through Python could then say two things: with a key given twice cJSON finds the
 * first value and Python keeps the last; `\u0000` ends a cJSON string where Python goes on;
 * cJSON skips a byte order mark, any byte below 0x21 as white space, and whatever follows
 * the value, where Python refuses; cJSON reads "01" and "1." as numbers. So the text is
 * first checked against Python's grammar (json.loads with its defaults: NaN and Infinity
 * accepted, control characters in strings refused) and refused, naming the place, when it
 * holds anything on which the two differ or that Python cannot read back:
 *   - bytes that are not UTF-8 (Python's UTF-8 decoding fails), a leading byte order mark
 *     (json.loads of a str refuses it; cJSON skips it);
 *   - a string holding \u0000, or a lone UTF-16 surrogate escape such as \ud800 (Python
 *     accepts it but the string cannot be written back as UTF-8; cJSON refuses it);
 *   - a key repeated in one object, at any depth;
 *   - nesting deeper than 1000 levels (cJSON's limit; Python 3.11's recursion limit refuses
 *     from about 1000 levels less the depth of its caller's stack: a file between the two
 *     is refused by Python loudly, never read differently);
 *   - anything after the value but white space.
 * Numbers are not compared: 1e999 is infinity to both, and integers beyond 2^53, exact in
 * Python, are doubles here; no number read from these files names a folder or a model.
 */
#ifndef MIEB_JSON_JSON_STRICT_H
#define MIEB_JSON_JSON_STRICT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "../core/status.h"

#define MIEB_JSON_MAX_DEPTH 1000

/** A JSON file as read: its bytes (NUL-terminated, len without it) and its tree. */
struct mieb_json_file {
    char *text;
    size_t len;
    cJSON *root;
};

/**
 * Read path (a regular file of at most max_bytes), check it as above and parse it (NaN and
 * Infinity as Python writes them). Content that is refused fails with `bad` (the caller's
 * status for its kind of file) and a message naming the path and what is wrong.
 */
mieb_status mieb_json_read_strict(const char *path, size_t max_bytes, mieb_status bad, struct mieb_json_file *out);

void mieb_json_file_free(struct mieb_json_file *f);

#endif
