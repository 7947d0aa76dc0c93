/**
 * escape.h - strings that did not come from the program itself (ids and names from task-data
 * files, model_meta.json and result files, paths from the command line and from folder
 * listings), shown escaped, so that no byte of them can act on a terminal or split a line.
 *
 * The one rule. Each of these bytes is written as \xHH (two lower-case hex digits), every
 * other byte unchanged:
 *   - the C0 control characters (0x00-0x1f: ESC, carriage return, newline, tab, ...) and DEL;
 *   - the C1 control characters U+0080-U+009F in UTF-8 (a terminal may take U+009B as CSI),
 *     each of their two bytes;
 *   - every byte that is not part of a valid UTF-8 sequence (a lone 0x9b is CSI to a
 *     terminal in 8-bit mode), so escaped text is valid UTF-8;
 *   - U+2028, U+2029 (line and paragraph separators) and the bidirectional controls
 *     U+200E, U+200F, U+202A-U+202E and U+2066-U+2069, which reorder or break what a
 *     terminal or an editor shows, each of their three bytes.
 * Multi-byte UTF-8 text (accents, CJK, emoji) is shown as it is.
 *
 * Three modes, one rule:
 *   - MIEB_ESC_DISPLAY, for messages and tables a person reads: the rule alone. The
 *     backslash and the space stay, so escaping is idempotent: an escaped string passes
 *     unchanged, and a message built from escaped parts (a context prepended to an error)
 *     is escaped once, not twice.
 *   - MIEB_ESC_CSV, for fields of CSV files (summary.csv, compare's CSV): the backslash too,
 *     so that one unescaping pass gives the text back; the field is then quoted as RFC 4180
 *     says (io/csv.h), and no field can hold a line break.
 *   - MIEB_ESC_WORD, for ids in whitespace-separated files (run.trec, qrels.trec,
 *     per_query.tsv): the space and the backslash too, and the empty string written as \x00,
 *     a byte no id can hold (HDF5 strings end at it), so that every line keeps its number of
 *     fields and one unescaping pass (\xHH to the byte; \x00 alone to the empty string)
 *     gives each id back byte for byte.
 */
#ifndef MIEB_CORE_ESCAPE_H
#define MIEB_CORE_ESCAPE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum mieb_escape_mode { MIEB_ESC_DISPLAY = 0, MIEB_ESC_CSV = 1, MIEB_ESC_WORD = 2 };

/**
 * Escape the first n bytes of s (n = (size_t)-1: up to its NUL) into dst (cap bytes,
 * always NUL-terminated when cap > 0). Returns the length the whole escaped text has,
 * as snprintf does, so a return >= cap means it was cut (never inside an escape).
 */
size_t mieb_escape(char *dst, size_t cap, const char *s, size_t n, enum mieb_escape_mode mode);

/**
 * Whether s holds a control character: a C0 control, DEL, or one of the code points of the
 * rule above (C1 controls, line and paragraph separators, bidirectional controls). Bytes
 * that are not UTF-8 are not counted: they are shown escaped, and a path may hold them.
 */
bool mieb_has_control(const char *s);

/** Write s escaped to f. */
void mieb_escape_put(FILE *f, const char *s, enum mieb_escape_mode mode);

/**
 * printf for text a person reads: the format is the program's and is written as it is;
 * every %s argument is escaped (MIEB_ESC_DISPLAY) before its width applies, and a %.Ns
 * precision takes N bytes of the argument before escaping, as printf would. The other
 * conversions are printf's own (%n is not supported). Returns what vsnprintf returns.
 */
int mieb_vsnprintf_esc(char *dst, size_t cap, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
int mieb_snprintf_esc(char *dst, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int mieb_vfprintf_esc(FILE *f, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
int mieb_fprintf_esc(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** mieb_fprintf_esc to stdout. */
int mieb_printf_esc(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
