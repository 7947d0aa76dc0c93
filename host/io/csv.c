/* csv.c - one CSV field, escaped, then quoted as RFC 4180 says (csv.h). */
#include "csv.h"

#include <stdlib.h>
#include <string.h>

#include "../core/escape.h"

static mieb_status quoted(struct mieb_buf *b, const char *s)
{
    if (!strpbrk(s, ",\""))
        return mieb_buf_append(b, s, strlen(s));
    MIEB_TRY(mieb_buf_append(b, "\"", 1));
    for (const char *p = s; *p; p++) {
        MIEB_TRY(mieb_buf_append(b, p, 1));
        if (*p == '"')
            MIEB_TRY(mieb_buf_append(b, "\"", 1)); /* a quote is doubled */
    }
    return mieb_buf_append(b, "\"", 1);
}

mieb_status mieb_csv_field(struct mieb_buf *b, const char *s, bool first)
{
    if (!first)
        MIEB_TRY(mieb_buf_append(b, ",", 1));
    char small[256];
    size_t n = mieb_escape(small, sizeof small, s, (size_t)-1, MIEB_ESC_CSV);
    if (n < sizeof small)
        return quoted(b, small);
    char *big = malloc(n + 1);
    if (!big)
        return mieb_fail(MIEB_ERR_OOM, "a CSV field of %zu bytes", n);
    mieb_escape(big, n + 1, s, (size_t)-1, MIEB_ESC_CSV);
    mieb_status st = quoted(b, big);
    free(big);
    return st;
}
