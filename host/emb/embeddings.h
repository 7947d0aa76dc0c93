/**
 * embeddings.h - reader for embedding role files and shards (FORMAT.md §2).
 *
 * A role is <emb>/<TaskName>/<split>/<hf_subset>/<role>.h5 or the shards
 * <role>-NNNNN-of-MMMMM.h5, which together must cover every row exactly once
 * (row_start / n_rows attributes; overlaps and gaps are errors). /embeddings may be
 * float32, float16, or uint16 with attribute dtype="bfloat16"; contiguous or chunked
 * and filtered. Rows are always returned as float32. Non-finite values are an error
 * naming the file, dataset and row.
 *
 * /row_index (optional, int64 [n], concatenated over the shards in shard order) names the
 * split row each item is. What it may be depends on the role (enum mieb_emb_rows), chosen
 * when the role is opened: a role that holds every row of the split is read in the split's
 * order whatever order the file stores its rows in.
 */
#ifndef MIEB_EMB_EMBEDDINGS_H
#define MIEB_EMB_EMBEDDINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/dtype.h" /* enum mieb_emb_dtype */
#include "../core/status.h"

struct mieb_emb_role; /* opaque */

/** Which rows of the split a role's files hold, and so what their /row_index may be. */
enum mieb_emb_rows {
    /* Every row of the split, each once: every role except the few-shot train role. A
       /row_index must be a permutation of 0..n-1 (anything else is refused at open); when it
       is not the identity, reads and streams return item i = the file item whose /row_index
       is i, so scores never depend on the order the rows were stored in. */
    MIEB_EMB_EVERY_ROW = 0,
    /* Some rows of the split, in any order (ImageClassification's train role, single- and
       multi-label): items come in file order and the caller maps them to split rows with
       mieb_emb_role_row_index(). */
    MIEB_EMB_SOME_ROWS = 1,
};

struct mieb_emb_info {
    int64_t n_items;        /* items of the role (queries, documents, images ...) */
    int64_t n_rows;         /* rows of /embeddings in total (== n_items unless multi-vector) */
    int64_t dim;
    bool multivector;       /* /offsets present */
    enum mieb_emb_dtype dtype;
    int n_shards;
    bool has_row_index;
    bool reordered;         /* MIEB_EMB_EVERY_ROW with a /row_index other than the identity:
                               items are gathered from the file rows it names */
};

/**
 * Open a role. Checks every file's root attributes (format "mieb-emb", format_version 1,
 * task_name, split, hf_subset, role, dim), the shard cover and, for MIEB_EMB_EVERY_ROW, that
 * a /row_index is a permutation. Missing role: MIEB_ERR_NOT_FOUND.
 */
mieb_status mieb_emb_role_open(const char *emb_dir, const char *task, const char *split,
                               const char *subset, const char *role, enum mieb_emb_rows rows,
                               struct mieb_emb_role **out);
void mieb_emb_role_close(struct mieb_emb_role *r);
const struct mieb_emb_info *mieb_emb_role_info(const struct mieb_emb_role *r);
/** Path of the role (the single file, or the first shard) for messages. */
const char *mieb_emb_role_path(const struct mieb_emb_role *r);

/**
 * Read items [start, start+count) as float32 into dst (row-major, dim columns), in the
 * split's order (info.reordered: gathered from wherever the files store them).
 * Single-vector: dst has count*dim floats.
 * Multi-vector: *dst_offsets (count+1, relative, [0] == 0) receives the row offsets and dst
 * must hold offsets-range rows; use mieb_emb_role_rows_of() to size it first.
 */
mieb_status mieb_emb_role_read(struct mieb_emb_role *r, int64_t start, int64_t count,
                               float *dst, int64_t *dst_offsets);
/** Number of /embeddings rows that items [start, start+count) occupy. */
mieb_status mieb_emb_role_rows_of(struct mieb_emb_role *r, int64_t start, int64_t count, int64_t *rows);
/** The optional /row_index as stored (malloc'd copy, n_items entries, file order), or NULL with
 *  MIEB_OK when absent. Only a MIEB_EMB_SOME_ROWS role's reader needs it: the others read in
 *  the split's order already. */
mieb_status mieb_emb_role_row_index(struct mieb_emb_role *r, int64_t **out);

/**
 * Block streamer: reads consecutive blocks of items on a background thread, so reading
 * block b+1 overlaps scoring block b (double buffering). Block sizes are given in items;
 * buffers are owned by the stream.
 */
struct mieb_emb_stream;
struct mieb_emb_block {
    int64_t start, count;   /* items */
    int64_t rows;           /* rows of data (== count when single-vector) */
    const float *data;      /* [rows, dim] */
    const int64_t *offsets; /* [count+1] relative, or NULL when single-vector */
};
mieb_status mieb_emb_stream_open(struct mieb_emb_role *r, int64_t block_items, struct mieb_emb_stream **out);
/** Next block; *done = true (and blk untouched) after the last. The block stays valid until the next call
 *  and is read-only (it may be the file's mapping: mieb_emb_stream_opts). */
mieb_status mieb_emb_stream_next(struct mieb_emb_stream *s, struct mieb_emb_block *blk, bool *done);
void mieb_emb_stream_close(struct mieb_emb_stream *s);

/* ---- additions beyond the first draft of this interface ---- */

/**
 * Buffer allocator for the streamer, so a CUDA caller can hand out pinned host memory
 * (cudaHostAlloc) and copy blocks to the device asynchronously. NULL means malloc/free.
 */
struct mieb_emb_alloc {
    void *(*alloc)(size_t bytes, void *user);
    void (*free)(void *ptr, void *user);
    void *user;
};

/**
 * Like mieb_emb_stream_open, for items [start, end) only and with an optional allocator.
 *
 * Threading: HDF5 (Debian's serial build) is not thread-safe, so every HDF5 call in
 * host/io, including the streamer's background reads, holds one global recursive lock
 * (mieb_h5_lock in h5_util.h). Other readers (task data, other roles) may therefore be
 * used from the caller's thread while a stream is active; they simply wait for a block
 * read in progress. Code outside host/io that calls HDF5 directly must take that lock.
 * A stream itself is used from one thread; errors met by the background thread are
 * reported by the next mieb_emb_stream_next() call, with the same message.
 */
mieb_status mieb_emb_stream_open_ex(struct mieb_emb_role *r, int64_t start, int64_t end, int64_t block_items,
                                    const struct mieb_emb_alloc *alloc, struct mieb_emb_stream **out);

/**
 * Stream options (mieb_emb_stream_open_opts). Unset fields are the defaults.
 *  - alloc: the buffers' allocator (NULL: malloc). A caller's allocator also turns
 *    zero-copy blocks off: it wants the blocks in its memory (pinned, say).
 *  - prepare: run by the reader thread on each block before it is handed out, as
 *    prepare(dst, src, rows, dim), dst the stream's buffer and src the rows read (src == dst
 *    when they were read into it, the file's mapping when zero-copy). Work done here
 *    overlaps the caller's compute. Without it, blocks may be the file's read-only mapping.
 */
struct mieb_emb_stream_opts {
    const struct mieb_emb_alloc *alloc;
    void (*prepare)(float *dst, const float *src, int64_t rows, int64_t dim);
};
mieb_status mieb_emb_stream_open_opts(struct mieb_emb_role *r, int64_t start, int64_t end, int64_t block_items,
                                      const struct mieb_emb_stream_opts *opts, struct mieb_emb_stream **out);
/** Blocks of this stream handed out so far that were mapped from the file (tests, logs). */
int64_t mieb_emb_stream_mapped_blocks(const struct mieb_emb_stream *s);

/**
 * Zero-copy access (emb_map.c): items [start, start+count) mapped read-only from the file
 * where it stores them as plain float32, checked for NaN / Inf as a read is. m->data is
 * NULL (and MIEB_OK) where they cannot be mapped (a reordered role's items are never one
 * byte range); the caller then reads them. Errors are
 * the ones a read would report. MIEB_STREAM_MMAP=off turns it off (mieb_emb_map_enabled).
 */
struct mieb_emb_map {
    const float *data; /* [rows, dim], or NULL */
    int64_t rows;
    void *base;        /* the mapping, for release */
    size_t len;
};
mieb_status mieb_emb_role_map(struct mieb_emb_role *r, int64_t start, int64_t count, struct mieb_emb_map *m);
void mieb_emb_map_release(struct mieb_emb_map *m);
bool mieb_emb_map_enabled(void);

/** Which file holds item `item` of the role (for messages); NULL when out of range. */
const char *mieb_emb_role_file_of(const struct mieb_emb_role *r, int64_t item);

#endif
