/* trec_id.c - ids written into whitespace-separated files (trec_id.h says how and why). */
#include "trec_id.h"

static int needs_escape(unsigned char c) { return c <= 0x20 || c == 0x7f || c == '\\'; }

void mieb_trec_id_put(FILE *f, const char *id)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)id;
    const unsigned char *run = s; /* start of the bytes not written yet */
    for (; *s; s++) {
        if (!needs_escape(*s))
            continue;
        fwrite(run, 1, (size_t)(s - run), f);
        char esc[4] = {'\\', 'x', hex[*s >> 4], hex[*s & 15]};
        fwrite(esc, 1, sizeof esc, f);
        run = s + 1;
    }
    fwrite(run, 1, (size_t)(s - run), f);
}
