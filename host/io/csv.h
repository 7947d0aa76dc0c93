/**
 * csv.h - fields for the CSV tables that summary and compare write. A field's text is escaped
 * first (core/escape.h, MIEB_ESC_CSV: control characters and the backslash as \xHH), so that
 * no field holds a line break and every row is one line; it is then quoted when it holds a
 * comma or a quote, with a quote inside doubled, as RFC 4180 says, which is what Python's csv
 * module and spreadsheets read back.
 */
#ifndef MIEB_IO_CSV_H
#define MIEB_IO_CSV_H

#include <stdbool.h>

#include "../core/status.h"
#include "../json/json_py.h" /* struct mieb_buf */

/** Append one field to b, after a comma unless it is the first of its row. */
mieb_status mieb_csv_field(struct mieb_buf *b, const char *s, bool first);

#endif
