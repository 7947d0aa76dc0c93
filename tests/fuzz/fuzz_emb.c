/*
 * fuzz_emb.c - embedding role files through mieb_emb_role_open, mieb_emb_role_read,
 * mieb_emb_role_row_index and the block streamer.
 *
 * Input: one selector byte, then the file. The selector picks the (task, role) the file is
 * opened as (the seeds from `mieb-eval synth` carry the right one), and with bit 0x80 the
 * rest is two shards: a little-endian u32 length, shard 0's bytes, then shard 1's bytes.
 */
#include "fuzz_common.h"

#include <math.h>

#include "emb/embeddings.h"

static const struct {
    const char *task, *role;
    enum mieb_emb_rows rows;
} ROLES[] = {
    {"CIRRIT2IRetrieval", "queries", MIEB_EMB_EVERY_ROW},  {"CIRRIT2IRetrieval", "corpus", MIEB_EMB_EVERY_ROW},
    {"Country211", "train", MIEB_EMB_SOME_ROWS},           {"CIFAR10ZeroShot", "candidate_labels", MIEB_EMB_EVERY_ROW},
    {"STS12VisualSTS", "sentence1", MIEB_EMB_EVERY_ROW},   {"AROCocoOrder", "texts", MIEB_EMB_EVERY_ROW},
};
#define N_ROLES (sizeof ROLES / sizeof ROLES[0])
#define MAX_FLOATS (1 << 20) /* the harness reads at most this much; bigger files are opened only */

static void clear_dir(const char *dir)
{
    static const char *const names[] = {"%s/%s.h5", "%s/%s-00000-of-00002.h5", "%s/%s-00001-of-00002.h5"};
    char p[900];
    for (size_t r = 0; r < N_ROLES; r++)
        for (size_t k = 0; k < 3; k++) {
            snprintf(p, sizeof p, names[k], dir, ROLES[r].role);
            unlink(p);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned sel = data[0];
    data++, size--;
    size_t r = (sel & 0x7f) % N_ROLES;
    char emb[600], dir[800], path[900];
    snprintf(emb, sizeof emb, "%s/emb", fuzz_tmpdir());
    snprintf(dir, sizeof dir, "%s/%s/test/default", emb, ROLES[r].task);
    fuzz_mkdirs(dir);
    clear_dir(dir);
    if (sel & 0x80) {
        uint32_t n1 = fuzz_take_u32(&data, &size);
        if (n1 > size)
            n1 = (uint32_t)size;
        snprintf(path, sizeof path, "%s/%s-00000-of-00002.h5", dir, ROLES[r].role);
        fuzz_write(path, data, n1);
        snprintf(path, sizeof path, "%s/%s-00001-of-00002.h5", dir, ROLES[r].role);
        fuzz_write(path, data + n1, size - n1);
    } else {
        snprintf(path, sizeof path, "%s/%s.h5", dir, ROLES[r].role);
        fuzz_write(path, data, size);
    }

    struct mieb_emb_role *role = NULL;
    if (mieb_emb_role_open(emb, ROLES[r].task, "test", "default", ROLES[r].role, ROLES[r].rows, &role) != MIEB_OK)
        return 0;
    const struct mieb_emb_info *info = mieb_emb_role_info(role);
    (void)mieb_emb_role_path(role);
    (void)mieb_emb_role_file_of(role, 0);
    (void)mieb_emb_role_file_of(role, info->n_items);
    int64_t rows = 0;
    if (info->dim > 0 && info->n_items >= 0 &&
        mieb_emb_role_rows_of(role, 0, info->n_items, &rows) == MIEB_OK && rows >= 0 &&
        rows <= MAX_FLOATS / info->dim) {
        float *dst = malloc(sizeof(float) * (size_t)(rows * info->dim + 1));
        int64_t *offs = malloc(sizeof(int64_t) * (size_t)(info->n_items + 1));
        if (mieb_emb_role_read(role, 0, info->n_items, dst, offs) == MIEB_OK) {
            if (info->multivector && (offs[0] != 0 || offs[info->n_items] != rows))
                abort();
            for (int64_t i = 0; i < rows * info->dim; i++) /* refused: NaN, Inf (embeddings.h) */
                if (!isfinite(dst[i]))
                    abort();
        }
        free(dst);
        free(offs);
        /* the streamer, in blocks of 3 items */
        struct mieb_emb_stream *s = NULL;
        if (mieb_emb_stream_open(role, 3, &s) == MIEB_OK) {
            struct mieb_emb_block blk;
            bool done = false;
            while (mieb_emb_stream_next(s, &blk, &done) == MIEB_OK && !done) {
            }
            mieb_emb_stream_close(s);
        }
    }
    int64_t *ri = NULL;
    if (mieb_emb_role_row_index(role, &ri) == MIEB_OK)
        free(ri);
    mieb_emb_role_close(role);
    return 0;
}
