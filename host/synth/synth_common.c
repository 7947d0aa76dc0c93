/* synth_common.c - the synthetic suite's PRNG, size rule, task-file header and role writer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void mieb_rng_seed(struct mieb_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t fnv1a_str(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return (h ^ 0xff) * 0x100000001b3ULL; /* separator, so ("ab","c") != ("a","bc") */
}

void mieb_rng_seed_for(struct mieb_rng *r, uint64_t seed, const char *a, const char *b, const char *c,
                       const char *d)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ seed;
    h = fnv1a_str(h, a);
    h = fnv1a_str(h, b);
    h = fnv1a_str(h, c);
    h = fnv1a_str(h, d);
    mieb_rng_seed(r, h ^ (seed * 0x9e3779b97f4a7c15ULL));
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t mieb_rng_next(struct mieb_rng *r)
{
    uint64_t *s = r->s;
    uint64_t res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return res;
}

uint64_t mieb_rng_below(struct mieb_rng *r, uint64_t n)
{
    if (n <= 1)
        return 0;
    uint64_t lim = UINT64_MAX - UINT64_MAX % n; /* reject the incomplete last bucket */
    uint64_t x;
    do
        x = mieb_rng_next(r);
    while (x >= lim);
    return x % n;
}

bool mieb_rng_chance(struct mieb_rng *r, uint64_t num, uint64_t den) { return mieb_rng_below(r, den) < num; }

int32_t mieb_rng_noise(struct mieb_rng *r, int32_t amp)
{
    int64_t s = 0;
    for (int i = 0; i < 4; i++)
        s += (int64_t)mieb_rng_below(r, (uint64_t)(2 * amp + 1)) - amp;
    return (int32_t)(s / 2);
}

int64_t mieb_synth_count(double n, double scale, int parts, int64_t min)
{
    double v = n * scale / (parts > 0 ? parts : 1);
    int64_t k = (int64_t)(v + 0.5);
    return k < min ? min : k;
}

/*
 * Create <out>/task-data/<Task>.h5 (as a .tmp until committed) with the root attributes
 * of FORMAT.md §1 plus the optional synthetic = 1 and synth_seed.
 */
static mieb_status mieb_synth_task_file(const struct mieb_synth_opts *o, const struct mieb_task *t,
                                 struct mieb_h5w_file *f)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/task-data/%s.h5", o->out_dir, t->name) >= (int)sizeof path)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "%s: path too long", o->out_dir);
    MIEB_TRY(mieb_h5w_create(path, f));
    mieb_status st = mieb_h5w_attr_str(f->id, "format", "mieb-task");
    if (st == MIEB_OK)
        st = mieb_h5w_attr_i64(f->id, "format_version", 1);
    if (st == MIEB_OK)
        st = mieb_h5w_attr_str(f->id, "task_name", t->name);
    if (st == MIEB_OK)
        st = mieb_h5w_attr_str(f->id, "dataset_revision", t->revision ? t->revision : "synthetic");
    if (st == MIEB_OK) /* optional extras (FORMAT.md allows added attributes) */
        st = mieb_h5w_attr_i64(f->id, "synthetic", 1);
    if (st == MIEB_OK)
        st = mieb_h5w_attr_i64(f->id, "synth_seed", (int64_t)o->seed);
    if (st != MIEB_OK) {
        mieb_fail_context(st, "%s", path);
        mieb_h5w_abort(f);
    }
    return st;
}

mieb_status mieb_synth_groups(const struct mieb_synth_opts *o, const struct mieb_task *t, mieb_synth_group_fn fn,
                              void *arg, int64_t *total)
{
    struct mieb_h5w_file f;
    int64_t sum = 0;
    MIEB_TRY(mieb_synth_task_file(o, t, &f));
    mieb_status st = MIEB_OK;
    for (int s = 0; s < t->n_splits && st == MIEB_OK; s++)
        for (int b = 0; b < t->n_subsets && st == MIEB_OK; b++) {
            int64_t n = 0;
            st = fn(o, t, f.id, t->splits[s], t->subsets[b], arg, &n);
            sum += n;
        }
    if (st != MIEB_OK) {
        mieb_h5w_abort(&f);
        return st;
    }
    MIEB_TRY(mieb_h5w_commit(&f));
    if (total)
        *total = sum;
    return MIEB_OK;
}

static uint64_t hash_vec(const int32_t *v, int dim)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int c = 0; c < dim; c++) {
        uint32_t u = (uint32_t)v[c];
        for (int b = 0; b < 4; b++) /* byte order fixed by shifts, not by memory layout */
            h = (h ^ ((u >> (8 * b)) & 0xffu)) * 0x100000001b3ULL;
    }
    return h;
}

#define MAXSIM_MAX_TOKENS 4

mieb_status mieb_synth_write_role(const struct mieb_synth_opts *o, const struct mieb_task *t, const char *split,
                                  const char *subset, const char *role, const int32_t *vec, int64_t n_items)
{
    const int dim = o->dim;
    const bool multi = o->sim == MIEB_SYNTH_MAXSIM;
    int64_t *off = NULL, rows = n_items;
    if (multi) {
        if (!(off = malloc((size_t)(n_items + 1) * sizeof *off)))
            return mieb_fail(MIEB_ERR_OOM, "synth: out of memory");
        off[0] = 0;
        for (int64_t i = 0; i < n_items; i++)
            off[i + 1] = off[i] + 1 + (int64_t)(hash_vec(vec + i * dim, dim) % MAXSIM_MAX_TOKENS);
        rows = off[n_items];
    }
    float *data = malloc((size_t)(rows ? rows : 1) * (size_t)dim * sizeof *data);
    if (!data) {
        free(off);
        return mieb_fail(MIEB_ERR_OOM, "synth: out of memory for %lld rows", (long long)rows);
    }
    for (int64_t i = 0; i < n_items; i++) {
        const int32_t *v = vec + i * dim;
        int64_t r0 = multi ? off[i] : i, nt = multi ? off[i + 1] - off[i] : 1;
        struct mieb_rng tr;
        mieb_rng_seed(&tr, hash_vec(v, dim) ^ o->seed);
        for (int64_t k = 0; k < nt; k++)
            for (int c = 0; c < dim; c++)
                data[(r0 + k) * dim + c] = mieb_synth_value(v[c] + (k ? mieb_rng_noise(&tr, 96) : 0));
    }
    struct mieb_emb_role_spec sp = {
        .emb_dir = NULL, .task = t->name, .split = split, .subset = subset, .role = role,
        .n_shards = o->shards,
        .opts = {.dtype = o->dtype, .chunk_rows = o->compress ? 64 : 0, .deflate = o->compress ? 4 : 0,
                 .shuffle = o->compress},
    };
    char emb_dir[4096];
    mieb_status st;
    if (snprintf(emb_dir, sizeof emb_dir, "%s/embeddings", o->out_dir) >= (int)sizeof emb_dir) {
        st = mieb_fail(MIEB_ERR_INVALID_ARG, "%s: path too long", o->out_dir);
    } else {
        sp.emb_dir = emb_dir;
        st = mieb_emb_write_role(&sp, data, n_items, dim, off, NULL);
    }
    free(data);
    free(off);
    return st;
}
