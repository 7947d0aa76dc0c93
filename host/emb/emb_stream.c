/*
 * emb_stream.c - double-buffered block streamer over an embedding role.
 *
 * A background thread reads block b+1 into one buffer while the caller works on block b
 * in the other. The thread calls HDF5 only through mieb_emb_role_read, which holds the
 * global HDF5 lock (h5_util.h), so the caller may use other HDF5 readers meanwhile.
 * An error in the thread is stored with its message and returned by the next
 * mieb_emb_stream_next(); the thread then stops reading.
 *
 * Where the file stores a block as plain float32 (emb_map.c), the thread maps it instead of
 * reading it: the block is then the mapping itself, or, with a prepare step, the step's
 * output in the buffer, written straight from the mapping. A mapping lives until its buffer
 * is reused or the stream closes, so a block stays valid as long as a read one does.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>

#include "emb_internal.h"
#include "../core/env.h"

enum buf_state { BUF_FREE, BUF_READY, BUF_FAILED };

struct stream_buf {
    float *data;       /* [max_rows, dim] */
    const float *view; /* what the caller gets: data, or the mapping */
    struct mieb_emb_map map; /* the block's mapping while the caller may use it */
    bool mapped;       /* the block came from a mapping (prepared into data, or map itself) */
    int64_t *offsets;  /* [block_items+1] */
    int64_t start, count, rows;
    enum buf_state state;
};

struct mieb_emb_stream {
    struct mieb_emb_role *r;
    int64_t start, end, block;
    struct mieb_emb_alloc alloc;
    void (*prepare)(float *dst, const float *src, int64_t rows, int64_t dim);
    bool zero_copy;    /* map blocks where the file allows it */
    int64_t mapped_out;/* blocks handed out that came from a mapping */
    int64_t *window_off; /* [block_items+1] offsets of a window read by prepare_block */
    int64_t window_bytes; /* prepare_block's window */
    struct stream_buf b[2];
    pthread_t thread;
    bool thread_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    int held;          /* buffer handed to the caller by the last next(), or -1 */
    int take;          /* buffer the caller gets next */
    int64_t take_start;/* first item of the block the caller gets next */
    mieb_status err;
    char errmsg[2048];
};

/* Blocks are large (150 MB for 50,000 rows of 768 floats) and each buffer is first touched
   by the read: with 4 KiB pages that is one page fault per 4 KiB, which measured as much as
   the copy itself. Large buffers are aligned to 2 MiB and offered to transparent huge pages
   (Linux's madvise mode). malloc stays the allocator (the fault-injection tests fail it);
   the pointer malloc gave is kept in the word before the block, for default_free. */
#define STREAM_HUGE ((size_t)2 << 20)

static void *default_alloc(size_t n, void *user)
{
    (void)user;
    size_t align = n >= 4 * STREAM_HUGE ? STREAM_HUGE : 64;
    if (n > SIZE_MAX - align - sizeof(void *))
        return NULL;
    char *raw = malloc(n + align + sizeof(void *));
    if (!raw)
        return NULL;
    uintptr_t at = ((uintptr_t)raw + sizeof(void *) + align - 1) / align * align;
    ((void **)at)[-1] = raw;
#ifdef MADV_HUGEPAGE
    if (align == STREAM_HUGE)
        (void)madvise((void *)at, n / STREAM_HUGE * STREAM_HUGE, MADV_HUGEPAGE); /* a hint: failure is fine */
#endif
    return (void *)at;
}

static void default_free(void *p, void *user)
{
    (void)user;
    if (p)
        free(((void **)p)[-1]);
}

/* Bytes of rows prepared from one mapping at a time: the pages of a window are unmapped once
   it is prepared, so a prepared block costs its buffer and one window, as a read block does.
   MIEB_STREAM_WINDOW_BYTES sets it (tests: windows of a few rows). */
#define PREPARE_WINDOW ((int64_t)8 << 20)

static int64_t prepare_window_bytes(void)
{
    const char *e = mieb_env(MIEB_ENV_STREAM_WINDOW_BYTES);
    long long v = e ? atoll(e) : 0;
    return v > 0 ? (int64_t)v : PREPARE_WINDOW;
}

/* The block's items into b->data through the prepare step, window by window: each window
   lies in one shard and holds at most PREPARE_WINDOW bytes of rows (or one item); it is
   mapped where its file allows, else read into place and prepared there. */
static mieb_status prepare_block(struct mieb_emb_stream *s, struct stream_buf *b)
{
    const struct mieb_emb_role *r = s->r;
    const int64_t dim = r->info.dim, row_bytes = dim * (int64_t)sizeof(float);
    const int64_t fit = s->window_bytes / row_bytes; /* rows a window holds */
    const int64_t *off = b->offsets; /* relative to the block's first row */
    int64_t item = b->start, end = b->start + b->count;
    if (r->info.reordered) { /* gathered from all over the files: no mapping, one read */
        MIEB_TRY(mieb_emb_role_read(s->r, item, b->count, b->data, s->window_off));
        s->prepare(b->data, b->data, b->rows, dim);
        return MIEB_OK;
    }
    while (item < end) {
        const struct emb_shard *sh = &r->sh[mieb_emb_shard_of(r, item)];
        int64_t stop = sh->item_start + sh->n_items < end ? sh->item_start + sh->n_items : end;
        int64_t row0 = off[item - b->start];
        if (off[stop - b->start] - row0 > fit) {
            int64_t lo = item + 1, hi = stop; /* the last stop whose rows fit, at least one item */
            while (lo < hi) {
                int64_t mid = lo + (hi - lo + 1) / 2;
                if (off[mid - b->start] - row0 <= fit)
                    lo = mid;
                else
                    hi = mid - 1;
            }
            stop = lo;
        }
        int64_t rows = off[stop - b->start] - row0;
        float *dst = b->data + row0 * dim;
        struct mieb_emb_map m = {0};
        mieb_status st = s->zero_copy ? mieb_emb_role_map(s->r, item, stop - item, &m) : MIEB_OK;
        if (st != MIEB_OK)
            return st;
        if (m.data) {
            s->prepare(dst, m.data, rows, dim);
            mieb_emb_map_release(&m);
            b->mapped = true;
        } else {
            if ((st = mieb_emb_role_read(s->r, item, stop - item, dst, s->window_off)) != MIEB_OK)
                return st;
            s->prepare(dst, dst, rows, dim);
        }
        item = stop;
    }
    return MIEB_OK;
}

/* Block b->start .. + b->count into b (b->view: where the caller finds it). */
static mieb_status read_block(struct mieb_emb_stream *s, struct stream_buf *b)
{
    b->mapped = false;
    b->view = b->data;
    mieb_status st = mieb_emb_role_rows_of(s->r, b->start, b->count, &b->rows);
    if (st != MIEB_OK)
        return st;
    mieb_emb_role_block_offsets(s->r, b->start, b->count, b->offsets);
    if (s->prepare)
        return prepare_block(s, b);
    if (s->zero_copy && (st = mieb_emb_role_map(s->r, b->start, b->count, &b->map)) != MIEB_OK)
        return st;
    if (b->map.data) {
        b->mapped = true;
        b->view = b->map.data;
        return MIEB_OK;
    }
    return mieb_emb_role_read(s->r, b->start, b->count, b->data, b->offsets);
}

static void *reader_main(void *arg)
{
    struct mieb_emb_stream *s = arg;
    int i = 0;
    for (int64_t blk = s->start; blk < s->end; blk += s->block, i ^= 1) {
        struct stream_buf *b = &s->b[i];
        pthread_mutex_lock(&s->mu);
        while (b->state != BUF_FREE && !s->stop)
            pthread_cond_wait(&s->cv, &s->mu);
        bool stop = s->stop;
        pthread_mutex_unlock(&s->mu);
        if (stop)
            break;
        mieb_emb_map_release(&b->map); /* the caller is done with the block it held */
        b->start = blk;
        b->count = s->end - blk < s->block ? s->end - blk : s->block;
        mieb_status st = read_block(s, b);
        pthread_mutex_lock(&s->mu);
        if (st != MIEB_OK) {
            /* mieb_last_error() is per thread: carry the message to the caller's thread */
            s->err = st;
            snprintf(s->errmsg, sizeof s->errmsg, "%s", mieb_last_error());
            b->state = BUF_FAILED;
        } else {
            b->state = BUF_READY;
        }
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        if (st != MIEB_OK)
            break;
    }
    return NULL;
}

mieb_status mieb_emb_stream_open_opts(struct mieb_emb_role *r, int64_t start, int64_t end, int64_t block_items,
                                      const struct mieb_emb_stream_opts *opts, struct mieb_emb_stream **out)
{
    const struct mieb_emb_alloc *alloc = opts ? opts->alloc : NULL;
    const struct mieb_emb_info *info = mieb_emb_role_info(r);
    if (block_items < 1 || start < 0 || end < start || end > info->n_items)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "%s: stream over items [%lld, %lld) in blocks of %lld is impossible "
                         "(role has %lld items)", mieb_emb_role_path(r), (long long)start, (long long)end,
                         (long long)block_items, (long long)info->n_items);
    struct mieb_emb_stream *s = calloc(1, sizeof *s);
    if (!s)
        return mieb_fail(MIEB_ERR_OOM, "out of memory opening a stream");
    s->r = r, s->start = start, s->end = end, s->block = block_items;
    bool own_alloc = alloc && alloc->alloc && alloc->free;
    s->alloc = own_alloc ? *alloc : (struct mieb_emb_alloc){default_alloc, default_free, NULL};
    s->prepare = opts ? opts->prepare : NULL;
    s->zero_copy = !own_alloc && mieb_emb_map_enabled();
    s->window_bytes = prepare_window_bytes();
    s->held = -1, s->take = 0, s->take_start = start;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    /* Size the buffers for the largest block (multi-vector blocks differ in rows). */
    int64_t max_rows = 0, rows;
    for (int64_t b = start; b < end; b += block_items) {
        int64_t cnt = end - b < block_items ? end - b : block_items;
        mieb_status st = mieb_emb_role_rows_of(r, b, cnt, &rows);
        if (st != MIEB_OK) {
            mieb_emb_stream_close(s);
            return st;
        }
        if (rows > max_rows)
            max_rows = rows;
    }
    size_t data_bytes = (size_t)(max_rows ? max_rows : 1) * (size_t)info->dim * sizeof(float);
    size_t off_bytes = (size_t)(block_items + 1) * sizeof(int64_t);
    if (!(s->window_off = malloc(off_bytes))) {
        mieb_emb_stream_close(s);
        return mieb_fail(MIEB_ERR_OOM, "%s: cannot allocate the stream's offsets", mieb_emb_role_path(r));
    }
    for (int i = 0; i < 2; i++) {
        s->b[i].data = s->alloc.alloc(data_bytes, s->alloc.user);
        s->b[i].offsets = malloc(off_bytes);
        if (!s->b[i].data || !s->b[i].offsets) {
            mieb_emb_stream_close(s);
            return mieb_fail(MIEB_ERR_OOM, "%s: cannot allocate 2 stream buffers of %zu bytes",
                             mieb_emb_role_path(r), data_bytes);
        }
    }
    if (pthread_create(&s->thread, NULL, reader_main, s) != 0) {
        mieb_emb_stream_close(s);
        return mieb_fail(MIEB_ERR_INTERNAL, "cannot start the embedding reader thread");
    }
    s->thread_started = true;
    *out = s;
    return MIEB_OK;
}

mieb_status mieb_emb_stream_open_ex(struct mieb_emb_role *r, int64_t start, int64_t end, int64_t block_items,
                                    const struct mieb_emb_alloc *alloc, struct mieb_emb_stream **out)
{
    struct mieb_emb_stream_opts o = {.alloc = alloc};
    return mieb_emb_stream_open_opts(r, start, end, block_items, &o, out);
}

int64_t mieb_emb_stream_mapped_blocks(const struct mieb_emb_stream *s) { return s ? s->mapped_out : 0; }

mieb_status mieb_emb_stream_open(struct mieb_emb_role *r, int64_t block_items, struct mieb_emb_stream **out)
{
    return mieb_emb_stream_open_ex(r, 0, mieb_emb_role_info(r)->n_items, block_items, NULL, out);
}

mieb_status mieb_emb_stream_next(struct mieb_emb_stream *s, struct mieb_emb_block *blk, bool *done)
{
    pthread_mutex_lock(&s->mu);
    if (s->held >= 0) { /* the caller is done with the previous block */
        s->b[s->held].state = BUF_FREE;
        s->held = -1;
        pthread_cond_broadcast(&s->cv);
    }
    if (s->take_start >= s->end) {
        pthread_mutex_unlock(&s->mu);
        *done = true;
        return MIEB_OK;
    }
    struct stream_buf *b = &s->b[s->take];
    while (b->state == BUF_FREE)
        pthread_cond_wait(&s->cv, &s->mu);
    if (b->state == BUF_FAILED) {
        mieb_status st = s->err;
        char msg[sizeof s->errmsg];
        memcpy(msg, s->errmsg, sizeof msg);
        pthread_mutex_unlock(&s->mu);
        return mieb_fail(st, "%s", msg);
    }
    blk->start = b->start;
    blk->count = b->count;
    blk->rows = b->rows;
    blk->data = b->view;
    s->mapped_out += b->mapped;
    blk->offsets = mieb_emb_role_info(s->r)->multivector ? b->offsets : NULL;
    s->held = s->take;
    s->take ^= 1;
    s->take_start += b->count;
    pthread_mutex_unlock(&s->mu);
    *done = false;
    return MIEB_OK;
}

void mieb_emb_stream_close(struct mieb_emb_stream *s)
{
    if (!s)
        return;
    if (s->thread_started) {
        pthread_mutex_lock(&s->mu);
        s->stop = true;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thread, NULL);
    }
    for (int i = 0; i < 2; i++) {
        mieb_emb_map_release(&s->b[i].map);
        if (s->b[i].data)
            s->alloc.free(s->b[i].data, s->alloc.user);
        free(s->b[i].offsets);
    }
    free(s->window_off);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}
