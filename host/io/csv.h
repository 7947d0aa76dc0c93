/**
 * csv.h - RFC 4180 fields for the CSV tables that summary and compare write: a field is
 * quoted when it holds a comma, a quote or a newline, and a quote inside is doubled, which
 * is what Python's csv module and spreadsheets read back.
 */
#ifndef MIEB_IO_CSV_H
#define MIEB_IO_CSV_H

#include <stdbool.h>

#include "../core/status.h"
#include "../json/json_py.h" /* struct mieb_buf */

/** Append one field to b, after a comma unless it is the first of its row. */
mieb_status mieb_csv_field(struct mieb_buf *b, const char *s, bool first);

#endif
