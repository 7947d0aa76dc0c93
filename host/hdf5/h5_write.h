/**
 * h5_write.h - HDF5 writers for the data contract (FORMAT.md), used by `mieb-eval synth`
 * and by tests: files written atomically, attributes and datasets typed the way h5py
 * writes them (variable-length UTF-8 strings, little-endian int64/int32/float64), and
 * embedding roles as float32, float16 (numpy's IEEE half) or bfloat16 (uint16 + dtype
 * attribute), optionally chunked + shuffled + deflated, optionally sharded.
 *
 * All functions take the global HDF5 lock (h5_util.h) and report failures with the file
 * and dataset in the message.
 */
#ifndef MIEB_HDF5_H5_WRITE_H
#define MIEB_HDF5_H5_WRITE_H

#include <stdbool.h>
#include <stdint.h>

#include <hdf5.h>

#include "../core/status.h"
#include "../core/dtype.h" /* enum mieb_emb_dtype */

/** A file being written: HDF5 writes go to tmp, commit renames it to path. */
struct mieb_h5w_file {
    hid_t id;
    char *path, *tmp;
};

/** Create <path>'s temporary (core/tmpfiles.h; parent directories included). On failure nothing is left behind. */
mieb_status mieb_h5w_create(const char *path, struct mieb_h5w_file *out);
/** Close and rename into place; on failure the tmp file is removed. */
mieb_status mieb_h5w_commit(struct mieb_h5w_file *f);
/** mieb_h5w_commit with the closed file fsynced before the rename: a crash never leaves a truncated file under path. */
mieb_status mieb_h5w_commit_synced(struct mieb_h5w_file *f);
/** Close and remove the tmp file (safe on a zeroed or already committed struct). */
void mieb_h5w_abort(struct mieb_h5w_file *f);

/** Create group `path` with its parents (absolute, e.g. "/test/default"); close *out with mieb_h5w_group_close. */
mieb_status mieb_h5w_group(hid_t file, const char *path, hid_t *out);
/** Close a group of mieb_h5w_group (a negative id is ignored). */
void mieb_h5w_group_close(hid_t group);

/* ---- attributes (scalar) ---- */
mieb_status mieb_h5w_attr_str(hid_t obj, const char *name, const char *value);
mieb_status mieb_h5w_attr_i64(hid_t obj, const char *name, int64_t value);
mieb_status mieb_h5w_attr_f64(hid_t obj, const char *name, double value);

/* ---- datasets under loc ---- */
/** 1-D variable-length UTF-8 strings (h5py.string_dtype()). */
mieb_status mieb_h5w_strings(hid_t loc, const char *name, const char *const *s, int64_t n);
/** int64, rank 1 or 2 (dims[rank]). */
mieb_status mieb_h5w_i64(hid_t loc, const char *name, const int64_t *v, int rank, const int64_t *dims);
mieb_status mieb_h5w_i32(hid_t loc, const char *name, const int32_t *v, int64_t n);
mieb_status mieb_h5w_f64(hid_t loc, const char *name, const double *v, int64_t n);

/** How /embeddings is stored. */
struct mieb_h5w_emb_opts {
    enum mieb_emb_dtype dtype;
    int64_t chunk_rows; /* 0: contiguous; else chunks of [chunk_rows, dim] */
    int deflate;        /* 1..9 gzip level with chunking; 0 none */
    bool shuffle;       /* byte shuffle before deflate */
};

/** Where a role goes and how it is split. */
struct mieb_emb_role_spec {
    const char *emb_dir, *task, *split, *subset, *role;
    int n_shards; /* <= 1: one <role>.h5; else <role>-NNNNN-of-MMMMM.h5 (capped at n_items, >= 1) */
    struct mieb_h5w_emb_opts opts;
};

/**
 * Write a whole role: data [rows, dim] with rows = offsets ? offsets[n_items] : n_items.
 * offsets (multi-vector, [n_items+1]) and row_index ([n_items]) may be NULL. Existing files
 * of the role (single or shards) are removed first so the directory never mixes layouts.
 */
mieb_status mieb_emb_write_role(const struct mieb_emb_role_spec *spec, const float *data, int64_t n_items,
                                int64_t dim, const int64_t *offsets, const int64_t *row_index);

#endif
