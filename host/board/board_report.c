/* board_report.c - the leaderboard's HTML page (see board_report.h). */
#include "board_report.h"

#include <string.h>

#include "../core/fileutil.h"
#include "../report/report_page.h"

int mieb_board_find_model(const struct mieb_board *b, const char *want, const char *first_dir)
{
    const struct mieb_leaderboard *lb = &b->lb;
    for (int i = 0; i < lb->n_models; i++) {
        const struct mieb_model_results *m = lb->rows[i].model;
        if (want) {
            size_t ln = strlen(m->name);
            if (!strcmp(want, m->name) ||
                (!strncmp(want, m->name, ln) && want[ln] == '@' && !strcmp(want + ln + 1, m->revision)))
                return i;
            continue;
        }
        if (!first_dir)
            return -1;
        size_t l = strlen(first_dir);
        while (l > 1 && first_dir[l - 1] == '/')
            l--;
        if (!strncmp(m->dir, first_dir, l) && (m->dir[l] == '\0' || m->dir[l] == '/'))
            return i;
    }
    return want ? -1 : 0;
}

mieb_status mieb_board_write_report(const struct mieb_board *b, int baseline, const struct mieb_cmp *const *cmp,
                                    double alpha, const char *path)
{
    struct mieb_html page = {0};
    struct mieb_report_extras ex = {cmp, alpha, (const char *const *)b->produced, b->published ? &b->full : NULL,
                                    b->published};
    mieb_status st = mieb_report_page(&b->lb, b->docs, baseline, b->bench ? b->bench->name : NULL, &ex, &page);
    if (st == MIEB_OK)
        st = mieb_write_file_atomic(path, page.buf.data, page.buf.len);
    mieb_html_free(&page);
    return st;
}
