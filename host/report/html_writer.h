/**
 * html_writer.h - an append-only HTML/SVG text buffer whose formatted output escapes every
 * string argument, so text taken from result files (model names, subsets, phase names)
 * can never become markup. The first failure (out of memory) is kept and later writes are
 * ignored, so page builders can write freely and check the status once at the end.
 */
#ifndef MIEB_REPORT_HTML_WRITER_H
#define MIEB_REPORT_HTML_WRITER_H

#include <stddef.h>

#include "../core/status.h"
#include "../json/json_py.h"

struct mieb_html {
    struct mieb_buf buf;
    mieb_status st; /* first failure, MIEB_OK while all went well */
};

/**
 * Append formatted text. Conversions: %s a string, HTML-escaped (& < > " ' become
 * entities, control characters a space; NULL prints as nothing); %R a trusted string
 * appended as is (markup built by this program only); %d, %ld, %zu, and %f/%g/%e with
 * optional flags, width and precision as printf; %v a double as Python's repr (exact,
 * for data-value attributes; NaN prints as "nan"); %% a percent sign.
 */
void mieb_html_fmt(struct mieb_html *h, const char *fmt, ...);

/** Free the buffer. */
void mieb_html_free(struct mieb_html *h);

#endif
