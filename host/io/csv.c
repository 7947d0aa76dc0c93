/* csv.c - one CSV field, quoted as RFC 4180 says (csv.h). */
#include "csv.h"

#include <string.h>

mieb_status mieb_csv_field(struct mieb_buf *b, const char *s, bool first)
{
    if (!first)
        MIEB_TRY(mieb_buf_append(b, ",", 1));
    if (!strpbrk(s, ",\"\n"))
        return mieb_buf_append(b, s, strlen(s));
    MIEB_TRY(mieb_buf_append(b, "\"", 1));
    for (const char *p = s; *p; p++) {
        MIEB_TRY(mieb_buf_append(b, p, 1));
        if (*p == '"')
            MIEB_TRY(mieb_buf_append(b, "\"", 1)); /* a quote is doubled */
    }
    return mieb_buf_append(b, "\"", 1);
}
