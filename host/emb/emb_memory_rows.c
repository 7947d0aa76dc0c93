/* emb_memory_rows.c - a memory role's rows (emb_memory.h), as the file reader gives a shard's:
   float32 in place or copied, float16 and bfloat16 widened exactly (core/half.h). */
#include <string.h>

#include "../core/half.h"
#include "../core/stop.h"
#include "emb_internal.h"

/* Rows converted per look at the stop flag: a large array stops as a file read does. */
#define MEM_PIECE_ROWS 8192

mieb_status mieb_emb_memory_rows(const struct mieb_emb_role *r, int64_t row0, int64_t nrows, float *dst)
{
    const size_t dim = (size_t)r->info.dim;
    for (int64_t a = 0; a < nrows; a += MEM_PIECE_ROWS) {
        int64_t n = nrows - a < MEM_PIECE_ROWS ? nrows - a : MEM_PIECE_ROWS;
        size_t first = (size_t)(row0 + a) * dim, count = (size_t)n * dim;
        float *out = dst + (size_t)a * dim;
        MIEB_TRY(mieb_stop_check());
        if (r->info.dtype == MIEB_EMB_F32) {
            memcpy(out, (const float *)r->mem + first, count * sizeof(float));
            continue;
        }
        const uint16_t *in = (const uint16_t *)r->mem + first;
        if (r->info.dtype == MIEB_EMB_F16)
            for (size_t i = 0; i < count; i++)
                out[i] = mieb_half_to_float(in[i]);
        else
            for (size_t i = 0; i < count; i++)
                out[i] = mieb_bf16_to_float(in[i]);
    }
    return MIEB_OK;
}

void mieb_emb_memory_map(const struct mieb_emb_role *r, int64_t r0, int64_t r1, struct mieb_emb_map *m)
{
    memset(m, 0, sizeof *m);
    if (r1 <= r0 || r->info.dtype != MIEB_EMB_F32)
        return; /* nothing, or a conversion: read it */
    m->data = (const float *)r->mem + (size_t)r0 * (size_t)r->info.dim;
    m->rows = r1 - r0; /* base stays NULL: nothing to unmap */
}
