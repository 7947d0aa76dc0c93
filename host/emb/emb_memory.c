/* emb_memory.c - roles over the caller's arrays, and opening a role from a source
   (emb_memory.h). */
#include "emb_memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emb_internal.h"

static mieb_status check_shape(const struct mieb_emb_memory *m, char *label, int64_t *n_rows)
{
    if (!m->data && m->n_items > 0)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "%s: no data", label);
    if (m->n_items < 0 || m->dim < 1)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "%s: shape (%lld, %lld): needs n >= 0 and dim >= 1", label,
                         (long long)m->n_items, (long long)m->dim);
    if (m->dtype != MIEB_EMB_F32 && m->dtype != MIEB_EMB_F16 && m->dtype != MIEB_EMB_BF16)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "%s: dtype %d is not float32, float16 or bfloat16", label,
                         (int)m->dtype);
    *n_rows = m->n_items;
    if (!m->offsets)
        return MIEB_OK;
    if (m->offsets[0] != 0)
        return mieb_fail(MIEB_ERR_BAD_DATA, "%s: offsets[0] is %lld, not 0", label, (long long)m->offsets[0]);
    for (int64_t i = 0; i < m->n_items; i++)
        if (m->offsets[i + 1] < m->offsets[i])
            return mieb_fail(MIEB_ERR_BAD_DATA, "%s: offsets decrease at item %lld (%lld, %lld)", label,
                             (long long)i, (long long)m->offsets[i], (long long)m->offsets[i + 1]);
    *n_rows = m->offsets[m->n_items];
    return MIEB_OK;
}

mieb_status mieb_emb_role_from_memory(const struct mieb_emb_memory *m, enum mieb_emb_rows rows,
                                      struct mieb_emb_role **out)
{
    char label[512];
    int64_t n_rows = 0;
    snprintf(label, sizeof label, "array %s/%s/%s/%s", m->task, m->split, m->subset, m->role);
    MIEB_TRY(check_shape(m, label, &n_rows));
    if (m->row_index && rows == MIEB_EMB_EVERY_ROW)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "%s: a row_index is for the few-shot train role; give this role's "
                         "rows in the split's order", label);
    for (int64_t i = 0; m->row_index && i < m->n_items; i++)
        if (m->row_index[i] < 0)
            return mieb_fail(MIEB_ERR_BAD_DATA, "%s: row_index[%lld] = %lld is negative", label, (long long)i,
                             (long long)m->row_index[i]);
    /* built as a file role is, so that mieb_emb_role_close frees whatever a failure leaves */
    struct mieb_emb_role *r = calloc(1, sizeof *r);
    if (!r)
        return mieb_fail(MIEB_ERR_OOM, "%s: out of memory", label);
    size_t noff = m->offsets ? (size_t)m->n_items + 1 : 0;
    r->cur = -1;
    r->cur_file = r->cur_dset = r->cur_memtype = -1;
    r->task = strdup(m->task), r->split = strdup(m->split), r->subset = strdup(m->subset);
    r->role = strdup(m->role);
    r->sh = calloc(1, sizeof *r->sh);
    r->n_shards = r->sh ? 1 : 0;
    r->offsets = noff ? malloc(noff * sizeof *r->offsets) : NULL;
    struct emb_shard *s = r->sh;
    if (s) {
        s->path = strdup(label);
        s->local_off = noff ? malloc(noff * sizeof *s->local_off) : NULL;
    }
    if (!s || !r->task || !r->split || !r->subset || !r->role || !s->path ||
        (noff && (!r->offsets || !s->local_off))) {
        mieb_emb_role_close(r);
        return mieb_fail(MIEB_ERR_OOM, "%s: out of memory", label);
    }
    if (noff) {
        memcpy(r->offsets, m->offsets, noff * sizeof *r->offsets);
        memcpy(s->local_off, m->offsets, noff * sizeof *s->local_off);
    }
    s->n_items = m->n_items, s->n_rows = n_rows, s->dtype = m->dtype;
    r->mem = m->data;
    r->mem_row_index = m->row_index;
    r->info = (struct mieb_emb_info){.n_items = m->n_items, .n_rows = n_rows, .dim = m->dim,
                                     .multivector = m->offsets != NULL, .dtype = m->dtype, .n_shards = 1,
                                     .has_row_index = m->row_index != NULL};
    *out = r;
    return MIEB_OK;
}

static bool names(const struct mieb_emb_memory *m, const char *task, const char *split, const char *subset,
                  const char *role)
{
    return !strcmp(m->task, task) && !strcmp(m->split, split) && !strcmp(m->subset, subset) &&
           !strcmp(m->role, role);
}

mieb_status mieb_emb_source_open(const struct mieb_emb_source *src, const char *task, const char *split,
                                 const char *subset, const char *role, enum mieb_emb_rows rows,
                                 struct mieb_emb_role **out)
{
    for (int i = 0; i < src->n_mem; i++)
        if (names(&src->mem[i], task, split, subset, role))
            return mieb_emb_role_from_memory(&src->mem[i], rows, out);
    if (src->dir)
        return mieb_emb_role_open(src->dir, task, split, subset, role, rows, out);
    return mieb_fail(MIEB_ERR_NOT_FOUND, "no array for role %s of %s /%s/%s", role, task, split, subset);
}
