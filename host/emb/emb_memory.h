/**
 * emb_memory.h - embedding roles held in the caller's memory instead of files, and the one
 * place a driver opens a role from: a source that is an embeddings folder, arrays, or both.
 *
 * The public C API (include/mieb.h) scores arrays a caller already has (numpy's, through the
 * Python package) with the same drivers `run` uses on files. A memory role is a role of one
 * shard whose rows are the caller's array: reads convert float16 / bfloat16 to float32 as the
 * file reader does, float32 blocks are handed out in place (the zero-copy path of mapped
 * files), and every row is checked for NaN and Inf as a file's are, so the contract and its
 * messages are the same. The caller keeps the array alive and unchanged until the role is
 * closed.
 */
#ifndef MIEB_EMB_EMB_MEMORY_H
#define MIEB_EMB_EMB_MEMORY_H

#include <stdint.h>

#include "embeddings.h"

/** One role's array: n_rows x dim, row-major, C-contiguous. */
struct mieb_emb_memory {
    const char *task, *split, *subset, *role; /* the role it stands for */
    const void *data;                         /* float32, or uint16 bit patterns for float16 / bfloat16 */
    enum mieb_emb_dtype dtype;
    int64_t n_items, dim;
    const int64_t *offsets;                   /* [n_items+1] rows of each item (multi-vector), or NULL */
    const int64_t *row_index;                 /* [n_items] split rows (FORMAT.md's /row_index), or NULL;
                                                 only where the role is opened MIEB_EMB_SOME_ROWS */
};

/** Where a driver's roles come from: arrays matched by (task, split, subset, role) first, then
 *  the embeddings folder (FORMAT.md §2), which may be NULL when every role is an array. */
struct mieb_emb_source {
    const char *dir;
    const struct mieb_emb_memory *mem;
    int n_mem;
};

/** A role over the array m (copied: the struct, not the rows), opened as `rows` says. Bad shapes,
 *  or a row_index where every row is wanted in split order: MIEB_ERR_INVALID_ARG. */
mieb_status mieb_emb_role_from_memory(const struct mieb_emb_memory *m, enum mieb_emb_rows rows,
                                      struct mieb_emb_role **out);

/** Open a role from a source: an array that names it, else the folder's files (mieb_emb_role_open);
 *  MIEB_ERR_NOT_FOUND naming the role when neither has it. */
mieb_status mieb_emb_source_open(const struct mieb_emb_source *src, const char *task, const char *split,
                                 const char *subset, const char *role, enum mieb_emb_rows rows,
                                 struct mieb_emb_role **out);

#endif
