/* report_ctx.c - what the report's section writers share (see report_ctx.h). */
#include "report_ctx.h"

const cJSON *mieb_report_doc(const struct mieb_report_ctx *c, int p, int t)
{
    return c->docs[(size_t)c->lb->order[p] * c->lb->n_tasks + t];
}

void mieb_report_legend(struct mieb_report_ctx *c)
{
    mieb_html_fmt(c->h, "<div class=\"legend\">");
    for (int p = 0; p < c->lb->n_models; p++)
        mieb_html_fmt(c->h, "<span class=\"item\"><span class=\"sw\" style=\"background:%R\"></span>%s</span>",
                      c->series[p].color, c->series[p].name);
    mieb_html_fmt(c->h, "</div>\n");
}

bool mieb_report_own(const struct mieb_leaderboard *lb, int i)
{
    if (lb->rows[i].published)
        return false;
    for (int j = 0; j < lb->n_models; j++)
        if (lb->rows[j].published)
            return true;
    return false;
}

int mieb_report_pos(const struct mieb_leaderboard *lb, int i)
{
    int p = 0;
    while (p < lb->n_models - 1 && lb->order[p] != i)
        p++;
    return p;
}
