/*
 * test_io_roundtrip.c - our writers -> our readers: task data, embedding roles in every
 * encoding and layout, the block streamer (block sizes, concurrency with other readers,
 * error propagation from the reader thread), shard-cover errors, and the synth PRNG.
 * (Files written by h5py are covered by tests/py/test_io_readers.py.)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/fileutil.h"
#include "emb/embeddings.h"
#include "hdf5/h5_util.h"
#include "hdf5/h5_write.h"
#include "core/half.h"
#include "synth/synth.h"
#include "io/task_data.h"

static char tmp[64] = "/tmp/mieb_io_rt_XXXXXX";

static void write_task(const char *path, int64_t bad_doc_at)
{
    struct mieb_h5w_file f;
    hid_t g;
    const char *qids[3] = {"q1", "q-\xc3\xbc", "\xe6\x9f\xa5"};
    char cbuf[50][8];
    const char *cids[50];
    for (int i = 0; i < 50; i++) {
        snprintf(cbuf[i], sizeof cbuf[i], "d%d", i);
        cids[i] = cbuf[i];
    }
    int64_t ip[4] = {0, 2, 2, 20}, doc[20], nip = 4, nnz = 20, cip[4] = {0, 1, 3, 3}, cdoc[3] = {5, 6, 7}, nc = 3;
    int32_t sc[20];
    for (int j = 0; j < 20; j++)
        doc[j] = j, sc[j] = j % 4 - 1;
    if (bad_doc_at >= 0)
        doc[bad_doc_at] = 99;
    CHECK(mieb_h5w_create(path, &f) == MIEB_OK);
    CHECK(mieb_h5w_attr_str(f.id, "format", "mieb-task") == MIEB_OK);
    CHECK(mieb_h5w_attr_i64(f.id, "format_version", 1) == MIEB_OK);
    CHECK(mieb_h5w_attr_str(f.id, "task_name", "Foo") == MIEB_OK);
    CHECK(mieb_h5w_attr_str(f.id, "dataset_revision", "rev1") == MIEB_OK);
    CHECK(mieb_h5w_group(f.id, "/test/default", &g) == MIEB_OK);
    CHECK(mieb_h5w_strings(g, "query_ids", qids, 3) == MIEB_OK);
    CHECK(mieb_h5w_strings(g, "corpus_ids", cids, 50) == MIEB_OK);
    CHECK(mieb_h5w_i64(g, "qrels_indptr", ip, 1, &nip) == MIEB_OK);
    CHECK(mieb_h5w_i64(g, "qrels_doc", doc, 1, &nnz) == MIEB_OK);
    CHECK(mieb_h5w_i32(g, "qrels_score", sc, 20) == MIEB_OK);
    CHECK(mieb_h5w_i64(g, "candidates_indptr", cip, 1, &nip) == MIEB_OK);
    CHECK(mieb_h5w_i64(g, "candidates_doc", cdoc, 1, &nc) == MIEB_OK);
    CHECK(mieb_h5w_attr_f64(g, "min_score", 0.5) == MIEB_OK);
    H5Gclose(g);
    CHECK(mieb_h5w_commit(&f) == MIEB_OK);
}

static void test_task_data(void)
{
    char path[128], bad[128];
    struct mieb_taskdata *td;
    struct mieb_retrieval_data rd;
    snprintf(path, sizeof path, "%s/task-data/Foo.h5", tmp);
    write_task(path, -1);
    CHECK(access(path, F_OK) == 0);
    CHECK(mieb_taskdata_open(path, "Foo", &td) == MIEB_OK);
    CHECK(!strcmp(mieb_taskdata_revision(td), "rev1"));
    CHECK(mieb_taskdata_has_group(td, "test", "default"));
    CHECK(!mieb_taskdata_has_group(td, "dev", "default"));
    CHECK(mieb_taskdata_read_retrieval(td, "test", "default", &rd) == MIEB_OK);
    CHECK(rd.n_queries == 3 && rd.n_corpus == 50);
    CHECK(!strcmp(rd.query_ids[2], "\xe6\x9f\xa5") && !strcmp(rd.corpus_ids[49], "d49"));
    CHECK(rd.qrels_indptr[3] == 20 && rd.qrels_doc[7] == 7 && rd.qrels_score[0] == -1 && rd.qrels_score[3] == 2);
    CHECK(rd.cand_indptr && rd.cand_indptr[2] == 3 && rd.cand_doc[2] == 7);
    mieb_retrieval_data_free(&rd);
    double v;
    CHECK(mieb_taskdata_group_attr_f64(td, "test", "default", "min_score", &v) == MIEB_OK && v == 0.5);
    CHECK(mieb_taskdata_read_retrieval(td, "dev", "default", &rd) == MIEB_ERR_NOT_FOUND);
    CHECK(strstr(mieb_last_error(), "/dev/default") != NULL);
    mieb_taskdata_close(td);
    CHECK(mieb_taskdata_open(path, "Bar", &td) == MIEB_ERR_BAD_DATA);

    snprintf(bad, sizeof bad, "%s/task-data/Bad.h5", tmp);
    write_task(bad, 17);
    CHECK(mieb_taskdata_open(bad, NULL, &td) == MIEB_OK);
    CHECK(mieb_taskdata_read_retrieval(td, "test", "default", &rd) == MIEB_ERR_BAD_DATA);
    CHECK_MSG(strstr(mieb_last_error(), "Bad.h5: /test/default/qrels_doc[17] = 99 is outside corpus_ids (n=50)"),
              "%s", mieb_last_error());
    mieb_taskdata_close(td);
}

#define N 37
#define D 5

/* Values k * 2^-9: exact in float16, and rounded (deterministically) in bfloat16. */
static float val(int64_t r, int64_t c) { return (float)((r * 7 + c * 13) % 301 - 150) * 0x1p-9f; }

static void test_role(const char *role, enum mieb_emb_dtype dt, int shards, bool compress, bool multi)
{
    int64_t off[N + 1], ri[N];
    off[0] = 0;
    for (int i = 0; i < N; i++)
        off[i + 1] = off[i] + (multi ? 1 + i % 3 : 1), ri[i] = 1000 + i;
    int64_t rows = off[N];
    float *x = malloc((size_t)rows * D * sizeof *x), *y = malloc((size_t)rows * D * sizeof *y);
    for (int64_t r = 0; r < rows; r++)
        for (int c = 0; c < D; c++)
            x[r * D + c] = val(r, c);
    char ed[128];
    snprintf(ed, sizeof ed, "%s/emb", tmp);
    struct mieb_emb_role_spec sp = {ed, "Foo", "test", "default", role, shards,
                                    {dt, compress ? 4 : 0, compress ? 6 : 0, compress}};
    CHECK(mieb_emb_write_role(&sp, x, N, D, multi ? off : NULL, ri) == MIEB_OK);
    struct mieb_emb_role *r;
    /* row_index 1000.. names rows of a larger split: a subset role */
    CHECK_MSG(mieb_emb_role_open(ed, "Foo", "test", "default", role, MIEB_EMB_SOME_ROWS, &r) == MIEB_OK, "%s",
              mieb_last_error());
    const struct mieb_emb_info *in = mieb_emb_role_info(r);
    CHECK(in->n_items == N && in->n_rows == rows && in->dim == D && in->dtype == dt && in->multivector == multi);
    CHECK(in->n_shards == (shards > 1 ? shards : 1) && in->has_row_index);
    int64_t o2[N + 1];
    CHECK(mieb_emb_role_read(r, 0, N, y, o2) == MIEB_OK);
    int bad = 0;
    for (int64_t k = 0; k < rows * D; k++) {
        float want = dt == MIEB_EMB_BF16 ? mieb_bf16_to_float(mieb_float_to_bf16(x[k])) : x[k];
        bad += y[k] != want;
    }
    CHECK_MSG(bad == 0, "%s: %d values differ", role, bad);
    CHECK(o2[N] == rows && (!multi || o2[5] == off[5]));
    /* a range that crosses shard boundaries, relative offsets */
    int64_t sub_rows;
    CHECK(mieb_emb_role_rows_of(r, 9, 20, &sub_rows) == MIEB_OK && sub_rows == off[29] - off[9]);
    CHECK(mieb_emb_role_read(r, 9, 20, y, o2) == MIEB_OK && o2[0] == 0 && o2[20] == sub_rows);
    CHECK(y[0] == (dt == MIEB_EMB_BF16 ? mieb_bf16_to_float(mieb_float_to_bf16(x[off[9] * D])) : x[off[9] * D]));
    int64_t *rix;
    CHECK(mieb_emb_role_row_index(r, &rix) == MIEB_OK && rix && rix[0] == 1000 && rix[N - 1] == 1000 + N - 1);
    free(rix);
    CHECK(mieb_emb_role_read(r, 30, 8, y, o2) == MIEB_ERR_INVALID_ARG);
    /* the streamer returns the same rows for every block size */
    const int64_t blocks[] = {1, 4, N, 100};
    for (int b = 0; b < 4; b++) {
        struct mieb_emb_stream *s;
        struct mieb_emb_block blk;
        bool done = false;
        int64_t items = 0, at = 0, mism = 0;
        CHECK(mieb_emb_stream_open(r, blocks[b], &s) == MIEB_OK);
        while (mieb_emb_stream_next(s, &blk, &done) == MIEB_OK && !done) {
            mism += blk.start != items || (multi ? blk.offsets == NULL : blk.offsets != NULL);
            for (int64_t k = 0; k < blk.rows * D; k++) {
                float want = dt == MIEB_EMB_BF16 ? mieb_bf16_to_float(mieb_float_to_bf16(x[at * D + k])) : x[at * D + k];
                mism += blk.data[k] != want;
            }
            items += blk.count, at += blk.rows;
        }
        CHECK_MSG(done && items == N && at == rows && mism == 0, "%s block %lld", role, (long long)blocks[b]);
        mieb_emb_stream_close(s);
    }
    mieb_emb_role_close(r);
    free(x);
    free(y);
}

/* A stream's reader thread and the main thread's task-data reads share HDF5 safely. */
static void test_concurrency(void)
{
    const int64_t n = 3000, d = 16;
    float *x = malloc((size_t)(n * d) * sizeof *x);
    for (int64_t k = 0; k < n * d; k++)
        x[k] = (float)(k % 1000) * 0x1p-10f;
    x[2345 * d + 3] = NAN; /* the reader thread must report it, with file and row */
    char ed[128], tpath[128];
    snprintf(ed, sizeof ed, "%s/emb", tmp);
    snprintf(tpath, sizeof tpath, "%s/task-data/Foo.h5", tmp);
    struct mieb_emb_role_spec sp = {ed, "Foo", "test", "default", "big", 3, {MIEB_EMB_F16, 64, 1, true}};
    CHECK(mieb_emb_write_role(&sp, x, n, d, NULL, NULL) == MIEB_OK);
    sp.role = "big2", sp.n_shards = 1, sp.opts.dtype = MIEB_EMB_F32;
    x[2345 * d + 3] = 1.0f;
    CHECK(mieb_emb_write_role(&sp, x, n, d, NULL, NULL) == MIEB_OK);
    struct mieb_emb_role *r1, *r2;
    struct mieb_taskdata *td;
    CHECK(mieb_emb_role_open(ed, "Foo", "test", "default", "big", MIEB_EMB_EVERY_ROW, &r1) == MIEB_OK);
    CHECK(mieb_emb_role_open(ed, "Foo", "test", "default", "big2", MIEB_EMB_EVERY_ROW, &r2) == MIEB_OK);
    CHECK(mieb_taskdata_open(tpath, "Foo", &td) == MIEB_OK);
    struct mieb_emb_stream *s1, *s2;
    struct mieb_emb_block b1, b2;
    bool done1 = false, done2 = false;
    CHECK(mieb_emb_stream_open(r1, 50, &s1) == MIEB_OK);
    CHECK(mieb_emb_stream_open_ex(r2, 100, n, 70, NULL, &s2) == MIEB_OK);
    mieb_status st1 = MIEB_OK;
    int64_t seen1 = 0, seen2 = 100, td_ok = 0;
    char err1[2048] = "";
    while (!done2 || (st1 == MIEB_OK && !done1)) {
        if (st1 == MIEB_OK && !done1 && (st1 = mieb_emb_stream_next(s1, &b1, &done1)) == MIEB_OK && !done1)
            seen1 += b1.count;
        if (st1 != MIEB_OK) /* keep the reader thread's message for the checks below */
            snprintf(err1, sizeof err1, "%s", mieb_last_error());
        if (!done2)
            CHECK(mieb_emb_stream_next(s2, &b2, &done2) == MIEB_OK);
        if (!done2) {
            CHECK(b2.start == seen2 && b2.data[0] == x[b2.start * d]);
            seen2 += b2.count;
        }
        struct mieb_retrieval_data rd;
        if (mieb_taskdata_read_retrieval(td, "test", "default", &rd) == MIEB_OK && rd.qrels_indptr[3] == 20)
            td_ok++;
        mieb_retrieval_data_free(&rd);
    }
    CHECK(seen2 == n && td_ok > 0);
    CHECK_MSG(st1 == MIEB_ERR_BAD_DATA && seen1 == 2300, "st=%d seen=%lld", st1, (long long)seen1);
    CHECK_MSG(strstr(err1, "big-00002-of-00003.h5: /embeddings row 345 (item 2345 of the role), column 3 holds NaN"),
              "%s", err1);
    mieb_emb_stream_close(s1);
    mieb_emb_stream_close(s2);
    mieb_taskdata_close(td);
    mieb_emb_role_close(r1);
    mieb_emb_role_close(r2);
    free(x);
}

static void test_shard_errors(void)
{
    char ed[128], a[256], b[256];
    float x[40];
    for (int i = 0; i < 40; i++)
        x[i] = (float)i;
    snprintf(ed, sizeof ed, "%s/emb", tmp);
    struct mieb_emb_role_spec sp = {ed, "Foo", "test", "default", "sh", 1, {MIEB_EMB_F32, 0, 0, false}};
    struct mieb_emb_role *r;
    /* single file and shards side by side */
    CHECK(mieb_emb_write_role(&sp, x, 10, 4, NULL, NULL) == MIEB_OK);
    snprintf(a, sizeof a, "%s/Foo/test/default/sh.h5", ed);
    snprintf(b, sizeof b, "%s/Foo/test/default/keep.h5", ed);
    CHECK(rename(a, b) == 0);
    sp.n_shards = 3;
    CHECK(mieb_emb_write_role(&sp, x, 10, 4, NULL, NULL) == MIEB_OK);
    CHECK(rename(b, a) == 0);
    CHECK(mieb_emb_role_open(ed, "Foo", "test", "default", "sh", MIEB_EMB_EVERY_ROW, &r) == MIEB_ERR_BAD_DATA);
    CHECK(strstr(mieb_last_error(), "sh.h5") && strstr(mieb_last_error(), "sh-0000"));
    /* a missing shard */
    CHECK(unlink(a) == 0);
    snprintf(b, sizeof b, "%s/Foo/test/default/sh-00001-of-00003.h5", ed);
    CHECK(unlink(b) == 0);
    CHECK(mieb_emb_role_open(ed, "Foo", "test", "default", "sh", MIEB_EMB_EVERY_ROW, &r) == MIEB_ERR_NOT_FOUND);
    CHECK_MSG(strstr(mieb_last_error(), "sh-00001-of-00003.h5: shard missing") != NULL, "%s", mieb_last_error());
    /* no role at all; wrong task name in the attributes */
    CHECK(mieb_emb_role_open(ed, "Foo", "test", "default", "nothere", MIEB_EMB_EVERY_ROW, &r) == MIEB_ERR_NOT_FOUND);
    CHECK(strstr(mieb_last_error(), "nothere.h5") != NULL);
    sp.n_shards = 1;
    CHECK(mieb_emb_write_role(&sp, x, 10, 4, NULL, NULL) == MIEB_OK);
    snprintf(b, sizeof b, "%s/Bar/test/default", ed);
    CHECK(mieb_mkdirs(b) == MIEB_OK);
    snprintf(b, sizeof b, "%s/Bar/test/default/sh.h5", ed);
    CHECK(rename(a, b) == 0);
    CHECK(mieb_emb_role_open(ed, "Bar", "test", "default", "sh", MIEB_EMB_EVERY_ROW, &r) == MIEB_ERR_BAD_DATA);
    CHECK_MSG(strstr(mieb_last_error(), "task_name is 'Foo', expected 'Bar'") != NULL, "%s", mieb_last_error());
}

static void test_rng(void)
{
    struct mieb_rng r, r2;
    mieb_rng_seed(&r, 42);
    /* golden values: xoshiro256** seeded by splitmix64(42), as in the reference code */
    CHECK(mieb_rng_next(&r) == 0x15780b2e0c2ec716ULL);
    CHECK(mieb_rng_next(&r) == 0x6104d9866d113a7eULL);
    CHECK(mieb_rng_next(&r) == 0xae17533239e499a1ULL);
    mieb_rng_seed_for(&r, 7, "Task", "test", "default", "x");
    mieb_rng_seed_for(&r2, 7, "Tas", "ktest", "default", "x");
    CHECK(mieb_rng_next(&r) != mieb_rng_next(&r2));
    int out = 0;
    for (int i = 0; i < 10000; i++) {
        int32_t v = mieb_rng_noise(&r, 10);
        uint64_t u = mieb_rng_below(&r, 7);
        out += v < -20 || v > 20 || u >= 7;
    }
    CHECK(out == 0);
    CHECK(mieb_synth_count(1000, 0.01, 1, 5) == 10 && mieb_synth_count(10, 0.01, 1, 5) == 5);
    CHECK(mieb_synth_count(9584, 0.01, 11, 5) == 9);
}

int main(void)
{
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    test_task_data();
    test_role("f32", MIEB_EMB_F32, 1, false, false);
    test_role("f16", MIEB_EMB_F16, 4, true, false);
    test_role("bf16", MIEB_EMB_BF16, 3, false, false);
    test_role("mv", MIEB_EMB_F32, 1, false, true);
    test_role("mvsh", MIEB_EMB_F16, 5, true, true);
    test_concurrency();
    test_shard_errors();
    test_rng();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp);
    return check_done("test_io_roundtrip");
}
