/*
 * emb_dump.c - test helper: open an embedding role or a task-data group with the library
 * readers and print what they return as one JSON object on stdout, so the Python tests can
 * compare it with what h5py/numpy see in the same files.
 *
 *   emb_dump role EMB_DIR TASK SPLIT SUBSET ROLE [START COUNT] [--stream BLOCK [--normalize]] [--some-rows]
 *            --some-rows opens the role as a subset one (MIEB_EMB_SOME_ROWS: few-shot train),
 *            else it must hold every row (a /row_index must be a permutation)
 *            --stream also prints "mapped", the blocks that came from the file's mapping
 *            (emb_map.c); --normalize makes the stream L2-normalize each block as cosine
 *            retrieval does (its prepare step)
 *   emb_dump retrieval FILE SPLIT SUBSET [EXPECT_TASK]
 *   emb_dump i64 FILE SPLIT SUBSET NAME [2d]     generic int64 reader
 *   emb_dump f64 FILE SPLIT SUBSET NAME          generic float64 reader
 *   emb_dump attr FILE SPLIT SUBSET NAME         group attribute (i64 and f64)
 *
 * Floats are printed with 17 significant digits, and "bits" holds each float's IEEE bits
 * (JSON numbers lose the sign of zero).
 * On failure: {"status": "<name>", "code": N, "error": "<message>"} and exit status N.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cpu/cpu_kernels.h"
#include "emb/embeddings.h"
#include "io/task_data.h"

static int fail(mieb_status st)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "status", mieb_status_str(st));
    cJSON_AddNumberToObject(o, "code", st);
    cJSON_AddStringToObject(o, "error", mieb_last_error());
    char *s = cJSON_PrintUnformatted(o);
    puts(s);
    free(s);
    cJSON_Delete(o);
    return (int)st;
}

static int emit(cJSON *o)
{
    cJSON_AddStringToObject(o, "status", "ok");
    char *s = cJSON_PrintUnformatted(o);
    puts(s);
    free(s);
    cJSON_Delete(o);
    return 0;
}

static cJSON *i64_array(const int64_t *v, int64_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (int64_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
    return a;
}

static cJSON *rows_array(const float *v, int64_t rows, int64_t dim)
{
    cJSON *a = cJSON_CreateArray();
    for (int64_t r = 0; r < rows; r++) {
        cJSON *row = cJSON_CreateArray();
        for (int64_t c = 0; c < dim; c++)
            cJSON_AddItemToArray(row, cJSON_CreateNumber((double)v[r * dim + c]));
        cJSON_AddItemToArray(a, row);
    }
    return a;
}

static int dump_role(int argc, char **argv)
{
    struct mieb_emb_role *r;
    enum mieb_emb_rows which = MIEB_EMB_EVERY_ROW;
    for (int i = 7; i < argc; i++)
        if (!strcmp(argv[i], "--some-rows"))
            which = MIEB_EMB_SOME_ROWS;
    mieb_status st = mieb_emb_role_open(argv[2], argv[3], argv[4], argv[5], argv[6], which, &r);
    if (st != MIEB_OK)
        return fail(st);
    const struct mieb_emb_info *in = mieb_emb_role_info(r);
    int64_t start = 0, count = in->n_items, block = 0;
    int pos = 0;
    struct mieb_emb_stream_opts so = {0};
    for (int i = 7; i < argc; i++) {
        if (!strcmp(argv[i], "--stream") && i + 1 < argc)
            block = strtoll(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--normalize"))
            so.prepare = mieb_cpu_l2_normalize_rows_to;
        else if (!strcmp(argv[i], "--some-rows"))
            continue;
        else if (pos++ == 0)
            start = strtoll(argv[i], NULL, 10);
        else
            count = strtoll(argv[i], NULL, 10);
    }
    if (pos == 1)
        count = in->n_items - start;
    cJSON *o = cJSON_CreateObject(), *info = cJSON_AddObjectToObject(o, "info");
    static const char *dt[] = {"float32", "float16", "bfloat16"};
    cJSON_AddNumberToObject(info, "n_items", (double)in->n_items);
    cJSON_AddNumberToObject(info, "n_rows", (double)in->n_rows);
    cJSON_AddNumberToObject(info, "dim", (double)in->dim);
    cJSON_AddBoolToObject(info, "multivector", in->multivector);
    cJSON_AddStringToObject(info, "dtype", dt[in->dtype]);
    cJSON_AddNumberToObject(info, "n_shards", in->n_shards);
    cJSON_AddBoolToObject(info, "has_row_index", in->has_row_index);
    cJSON_AddBoolToObject(info, "reordered", in->reordered);
    cJSON_AddStringToObject(o, "path", mieb_emb_role_path(r));
    int64_t rows = 0;
    float *data = NULL;
    int64_t *off = NULL;
    if ((st = mieb_emb_role_rows_of(r, start, count, &rows)) != MIEB_OK)
        goto bad;
    data = malloc((size_t)(rows ? rows : 1) * (size_t)in->dim * sizeof *data);
    off = malloc((size_t)(count + 1) * sizeof *off);
    if (block > 0) { /* through the double-buffered streamer; must equal the direct read */
        struct mieb_emb_stream *s;
        struct mieb_emb_block b;
        bool done = false;
        int64_t at_row = 0, nblocks = 0;
        off[0] = 0;
        if ((st = mieb_emb_stream_open_opts(r, start, start + count, block, &so, &s)) != MIEB_OK)
            goto bad;
        while ((st = mieb_emb_stream_next(s, &b, &done)) == MIEB_OK && !done) {
            memcpy(data + at_row * in->dim, b.data, (size_t)b.rows * (size_t)in->dim * sizeof *data);
            for (int64_t i = 1; i <= b.count; i++)
                off[b.start - start + i] = at_row + (b.offsets ? b.offsets[i] : i);
            at_row += b.rows;
            nblocks++;
        }
        int64_t mapped = mieb_emb_stream_mapped_blocks(s);
        mieb_emb_stream_close(s);
        if (st != MIEB_OK)
            goto bad;
        cJSON_AddNumberToObject(o, "blocks", (double)nblocks);
        cJSON_AddNumberToObject(o, "mapped", (double)mapped);
    } else if ((st = mieb_emb_role_read(r, start, count, data, off)) != MIEB_OK) {
        goto bad;
    }
    cJSON_AddItemToObject(o, "data", rows_array(data, rows, in->dim));
    /* the exact bits too: JSON numbers lose the sign of zero */
    cJSON *bits = cJSON_AddArrayToObject(o, "bits");
    for (int64_t k = 0; k < rows * in->dim; k++) {
        uint32_t u;
        memcpy(&u, &data[k], sizeof u);
        cJSON_AddItemToArray(bits, cJSON_CreateNumber((double)u));
    }
    if (in->multivector)
        cJSON_AddItemToObject(o, "offsets", i64_array(off, count + 1));
    int64_t *ri = NULL;
    if ((st = mieb_emb_role_row_index(r, &ri)) != MIEB_OK)
        goto bad;
    if (ri)
        cJSON_AddItemToObject(o, "row_index", i64_array(ri, in->n_items));
    free(ri);
    free(data);
    free(off);
    mieb_emb_role_close(r);
    return emit(o);
bad:
    free(data);
    free(off);
    cJSON_Delete(o);
    int rc = fail(st);
    mieb_emb_role_close(r);
    return rc;
}

static int dump_retrieval(int argc, char **argv)
{
    struct mieb_taskdata *td;
    struct mieb_retrieval_data rd;
    mieb_status st = mieb_taskdata_open(argv[2], argc > 5 ? argv[5] : NULL, &td);
    if (st != MIEB_OK)
        return fail(st);
    if ((st = mieb_taskdata_read_retrieval(td, argv[3], argv[4], &rd)) != MIEB_OK) {
        int rc = fail(st);
        mieb_taskdata_close(td);
        return rc;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "revision", mieb_taskdata_revision(td));
    cJSON_AddItemToObject(o, "query_ids", cJSON_CreateStringArray((const char *const *)rd.query_ids,
                                                                  (int)rd.n_queries));
    cJSON_AddItemToObject(o, "corpus_ids", cJSON_CreateStringArray((const char *const *)rd.corpus_ids,
                                                                   (int)rd.n_corpus));
    int64_t nnz = rd.qrels_indptr[rd.n_queries];
    cJSON_AddItemToObject(o, "qrels_indptr", i64_array(rd.qrels_indptr, rd.n_queries + 1));
    cJSON_AddItemToObject(o, "qrels_doc", i64_array(rd.qrels_doc, nnz));
    cJSON *sc = cJSON_AddArrayToObject(o, "qrels_score");
    for (int64_t j = 0; j < nnz; j++)
        cJSON_AddItemToArray(sc, cJSON_CreateNumber(rd.qrels_score[j]));
    if (rd.cand_indptr) {
        cJSON_AddItemToObject(o, "candidates_indptr", i64_array(rd.cand_indptr, rd.n_queries + 1));
        cJSON_AddItemToObject(o, "candidates_doc", i64_array(rd.cand_doc, rd.cand_indptr[rd.n_queries]));
    }
    mieb_retrieval_data_free(&rd);
    mieb_taskdata_close(td);
    return emit(o);
}

static int dump_generic(int argc, char **argv)
{
    struct mieb_taskdata *td;
    mieb_status st = mieb_taskdata_open(argv[2], NULL, &td);
    if (st != MIEB_OK)
        return fail(st);
    cJSON *o = cJSON_CreateObject();
    const char *what = argv[1], *sp = argv[3], *sub = argv[4], *name = argv[5];
    cJSON_AddBoolToObject(o, "has_group", mieb_taskdata_has_group(td, sp, sub));
    cJSON_AddBoolToObject(o, "has_dataset", mieb_taskdata_has_dataset(td, sp, sub, name));
    if (!strcmp(what, "i64")) {
        int64_t *v = NULL, nr = 0, nc = 1;
        bool two = argc > 6 && !strcmp(argv[6], "2d");
        st = mieb_taskdata_read_i64(td, sp, sub, name, &v, &nr, two ? &nc : NULL);
        if (st == MIEB_OK) {
            cJSON_AddItemToObject(o, "values", i64_array(v, nr * nc));
            cJSON_AddNumberToObject(o, "nrows", (double)nr);
            cJSON_AddNumberToObject(o, "ncols", (double)nc);
        }
        free(v);
    } else if (!strcmp(what, "f64")) {
        double *v = NULL;
        int64_t n = 0;
        if ((st = mieb_taskdata_read_f64(td, sp, sub, name, &v, &n)) == MIEB_OK)
            cJSON_AddItemToObject(o, "values", cJSON_CreateDoubleArray(v, (int)n));
        free(v);
    } else {
        int64_t iv;
        double dv;
        if ((st = mieb_taskdata_group_attr_f64(td, sp, sub, name, &dv)) == MIEB_OK)
            cJSON_AddNumberToObject(o, "f64", dv);
        if (st == MIEB_OK && mieb_taskdata_group_attr_i64(td, sp, sub, name, &iv) == MIEB_OK)
            cJSON_AddNumberToObject(o, "i64", (double)iv);
    }
    mieb_taskdata_close(td);
    if (st != MIEB_OK) {
        cJSON_Delete(o);
        return fail(st);
    }
    return emit(o);
}

int main(int argc, char **argv)
{
    if (argc >= 7 && !strcmp(argv[1], "role"))
        return dump_role(argc, argv);
    if (argc >= 5 && !strcmp(argv[1], "retrieval"))
        return dump_retrieval(argc, argv);
    if (argc >= 6 && (!strcmp(argv[1], "i64") || !strcmp(argv[1], "f64") || !strcmp(argv[1], "attr")))
        return dump_generic(argc, argv);
    fputs("usage: emb_dump role EMB_DIR TASK SPLIT SUBSET ROLE [START COUNT] [--stream BLOCK] [--some-rows]\n"
          "       emb_dump retrieval FILE SPLIT SUBSET [EXPECT_TASK]\n"
          "       emb_dump i64|f64|attr FILE SPLIT SUBSET NAME [2d]\n",
          stderr);
    return 100;
}
