/**
 * partial.h - the partial-result files of corpus-sharded retrieval (`run --corpus-parts K
 * --corpus-part I --partials-dir DIR`, read back by `merge`).
 *
 * One HDF5 file per (task, split, subset, part):
 *   DIR/<TaskName>/<split>/<hf_subset>/part-IIIII-of-KKKKK.h5
 * holding, per kept query (mieb_ret_subset.kept order), the offers its heap accepted while
 * searching the part's corpus chunks (retrieval_search.h, struct mieb_offer_log), in offer order:
 *   /query_rows int64 [n_kept]    rows of the queries (task-data order)
 *   /indptr     int64 [n_kept+1]  query i's entries are [indptr[i], indptr[i+1])
 *   /score      float32 [n]       the fp32 similarity mteb's heap saw
 *   /doc        int64 [n]         corpus row
 * and root attributes naming what it is (format = "mieb-partial", format_version = 1,
 * task_name, split, hf_subset, part, n_parts, kind, chunk_start/chunk_end, item_start/
 * item_end, n_corpus, n_queries, n_kept, n_entries, model_name, model_revision, similarity,
 * precision, fingerprint, top_k, chunk_size). Files are written to <path>.tmp.<pid>, fsync'ed
 * and renamed, so a file under its final name is always complete.
 */
#ifndef MIEB_PARTS_PARTIAL_H
#define MIEB_PARTS_PARTIAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/status.h"
#include "../families/retrieval_search.h"

#define MIEB_PARTIAL_FORMAT "mieb-partial"
#define MIEB_PARTIAL_VERSION 1

/* kind: how the part searched. "search": full-corpus search of its chunk range (§8.2).
   "candidates": candidate scoring (§8.3) needs the whole corpus per query, so part 0
   holds every query's result and the other parts hold none. */
#define MIEB_PARTIAL_SEARCH "search"
#define MIEB_PARTIAL_CANDIDATES "candidates"

struct mieb_partial_meta {
    char task[256], split[128], subset[128];
    int64_t part, n_parts;
    char kind[16];
    int64_t chunk_start, chunk_end;   /* mteb's 50,000-document chunks [start, end) */
    int64_t item_start, item_end;     /* corpus rows [start, end) */
    int64_t n_corpus, n_queries, n_kept, n_entries;
    char model_name[512], model_revision[256], similarity[16], precision[16];
    char fingerprint[32];             /* mieb_ret_fingerprint of the inputs */
    int64_t top_k, chunk_size;        /* 1000, 50000: mteb's constants the file was made with */
};

/** The deterministic split: part `part` of `n_parts` of a corpus of n_corpus rows, per kind. */
void mieb_partial_range(const char *kind, int64_t n_corpus, int64_t part, int64_t n_parts,
                        int64_t *chunk_start, int64_t *chunk_end, int64_t *item_start, int64_t *item_end);

/** DIR/<task>/<split>/<subset> and .../part-IIIII-of-KKKKK.h5 */
mieb_status mieb_partial_dir(const char *dir, const char *task, const char *split, const char *subset, char *buf,
                             size_t n);
mieb_status mieb_partial_path(const char *dir, const char *task, const char *split, const char *subset,
                              int64_t part, int64_t n_parts, char *buf, size_t n);
/** Parse a file name "part-IIIII-of-KKKKK.h5"; false for anything else. */
bool mieb_partial_parse_name(const char *name, int64_t *part, int64_t *n_parts);

/** What a partial must be: the part of this (task, split, subset) and model that its path names. */
struct mieb_partial_want {
    const char *task, *split, *subset;
    int64_t part, n_parts;
    const char *model_name, *model_revision;
};

/**
 * The one rule for a partial that opened (mieb_partial_open): it is the part `want` names,
 * made for its model with this mieb-eval's top_k and chunk size, and covers that part's chunk
 * range. `run --overwrite-strategy only-missing` keeps only such a file and `merge` accepts
 * only such files. false: why (n bytes) says what differs, naming path.
 */
bool mieb_partial_is(const char *path, const struct mieb_partial_meta *m, const struct mieb_partial_want *want,
                     char *why, size_t n);

/* ---- writer ---- */
struct mieb_partial_writer;
/** Start writing `path` (parents created); n_kept = queries that will be appended. */
mieb_status mieb_partial_create(const char *path, int64_t n_kept, struct mieb_partial_writer **out);
/** Append the offer logs of a tile's queries (so->log), in order. */
mieb_status mieb_partial_append(void *writer, const int64_t *qrow, struct mieb_search_out *so);
/** Append `n` queries with no entries (parts that search nothing). */
mieb_status mieb_partial_append_empty(struct mieb_partial_writer *w, const int64_t *qrow, int64_t n);
/** Write the attributes (meta; n_kept and n_entries are filled in), fsync, rename into place, free. */
mieb_status mieb_partial_commit(struct mieb_partial_writer *w, struct mieb_partial_meta *meta);
/** Drop the temporary file and free (safe on NULL). */
void mieb_partial_abort(struct mieb_partial_writer *w);

/* ---- reader ---- */
struct mieb_partial_reader;
/**
 * Open a partial, read and check its attributes and index (/query_rows, /indptr). A file
 * that is not a complete partial: MIEB_ERR_BAD_DATA naming the file and what is wrong.
 */
mieb_status mieb_partial_open(const char *path, struct mieb_partial_reader **out, struct mieb_partial_meta *meta);
const int64_t *mieb_partial_indptr(const struct mieb_partial_reader *r);      /* [n_kept+1] */
const int64_t *mieb_partial_query_rows(const struct mieb_partial_reader *r);  /* [n_kept] */
const char *mieb_partial_file(const struct mieb_partial_reader *r);
/** Entries [e0, e1) into s and d. */
mieb_status mieb_partial_read(struct mieb_partial_reader *r, int64_t e0, int64_t e1, float *s, int64_t *d);
void mieb_partial_close(struct mieb_partial_reader *r);

#endif
