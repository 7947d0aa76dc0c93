/*
 * emb_open.c - open and close an embedding role: find its files, check each file's attributes
 * and datasets (FORMAT.md §2), and check that the shards cover every item exactly once. The
 * top of the embedding readers, with emb_read.c and emb_stream.c.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "emb_internal.h"
#include "../hdf5/h5_read.h"

#define MAX_SHARDS 1000000

/* Parse "<role>-NNNNN-of-MMMMM.h5" (at least 5 digits each); false when name is not a shard of role. */
static bool parse_shard_name(const char *name, const char *role, long *k, long *m)
{
    size_t rl = strlen(role);
    if (strncmp(name, role, rl) != 0 || name[rl] != '-')
        return false;
    const char *p = name + rl + 1, *q = p;
    while (*q >= '0' && *q <= '9')
        q++;
    if (q - p < 5 || q - p > 7 || strncmp(q, "-of-", 4) != 0)
        return false;
    *k = strtol(p, NULL, 10);
    p = q + 4, q = p;
    while (*q >= '0' && *q <= '9')
        q++;
    if (q - p < 5 || q - p > 7 || strcmp(q, ".h5") != 0)
        return false;
    *m = strtol(p, NULL, 10);
    return true;
}

/* Check a root string attribute against its expected value. */
static mieb_status want_attr(hid_t f, const char *fname, const char *name, const char *want)
{
    char *v = NULL;
    MIEB_TRY(mieb_h5_attr_str(f, name, fname, "/", &v));
    mieb_status st = MIEB_OK;
    if (strcmp(v, want) != 0)
        st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: /: attribute %s is '%s', expected '%s'", fname, name, v, want);
    free(v);
    return st;
}

/* Open one file of the role and fill *s (all but row_base); the file is closed again. */
static mieb_status validate_file(struct mieb_emb_role *r, struct emb_shard *s, bool is_shard)
{
    hid_t f = -1, ds = -1, mt = -1;
    int64_t dims[2], ver, dim, v;
    mieb_status st;
    const char *fn = s->path;
    mieb_h5_lock();
#define CHECK_ST(expr)                \
    do {                              \
        if ((st = (expr)) != MIEB_OK) \
            goto done;                \
    } while (0)
    CHECK_ST(mieb_h5_open_ro_ident(fn, &f, &s->file_size, &s->ident));
    CHECK_ST(want_attr(f, fn, "format", "mieb-emb"));
    CHECK_ST(mieb_h5_attr_i64(f, "format_version", fn, "/", &ver));
    if (ver != 1)
        CHECK_ST(mieb_fail(MIEB_ERR_BAD_DATA, "%s: /: format_version is %lld, this program reads version 1", fn,
                           (long long)ver));
    CHECK_ST(want_attr(f, fn, "task_name", r->task));
    CHECK_ST(want_attr(f, fn, "split", r->split));
    CHECK_ST(want_attr(f, fn, "hf_subset", r->subset));
    CHECK_ST(want_attr(f, fn, "role", r->role));
    CHECK_ST(mieb_h5_attr_i64(f, "dim", fn, "/", &dim));
    CHECK_ST(mieb_h5_dset_open(f, fn, "/embeddings", 2, 2, s->file_size, &ds, NULL, dims));
    if (dims[1] == 0 || dim == 0)
        CHECK_ST(mieb_fail(MIEB_ERR_BAD_DATA,
                           "%s: /embeddings has %lld columns and attribute dim = %lld: an embedding of dimension 0 "
                           "is refused (nothing to score)",
                           fn, (long long)dims[1], (long long)dim));
    if (dims[1] != dim || dim < 1)
        CHECK_ST(mieb_fail(MIEB_ERR_BAD_DATA, "%s: /embeddings: dimension mismatch: %lld columns but attribute dim = %lld", fn,
                           (long long)dims[1], (long long)dim));
    if (r->info.dim && dim != r->info.dim)
        CHECK_ST(mieb_fail(MIEB_ERR_BAD_DATA, "%s: dimension mismatch between shards: dim = %lld, but %s has dim = %lld", fn, (long long)dim,
                           r->sh[0].path, (long long)r->info.dim));
    r->info.dim = dim;
    CHECK_ST(mieb_emb_detect_dtype(f, ds, fn, &s->dtype, &mt));
    s->n_rows = dims[0];
    s->n_items = dims[0];
    bool multi = mieb_h5_exists(f, "/offsets");
    if (r->n_shards > 0 && s != &r->sh[0] && multi != r->info.multivector)
        CHECK_ST(mieb_fail(MIEB_ERR_BAD_DATA, "%s: %s /offsets, but %s %s", fn, multi ? "has" : "lacks",
                           r->sh[0].path, multi ? "does not" : "does"));
    if (multi) {
        int64_t d[2], *o = NULL;
        CHECK_ST(mieb_h5_read_i64(f, fn, "/offsets", 1, 1, s->file_size, &o, d));
        s->local_off = o;
        s->n_items = d[0] - 1;
        if (d[0] < 1 || o[0] != 0)
            CHECK_ST(mieb_fail(MIEB_ERR_BAD_DATA, "%s: /offsets must start with 0 (n+1 entries)", fn));
        for (int64_t i = 0; i < s->n_items; i++)
            if (o[i + 1] < o[i])
                CHECK_ST(mieb_fail(MIEB_ERR_BAD_DATA, "%s: /offsets decreases at [%lld]: %lld after %lld", fn,
                                   (long long)(i + 1), (long long)o[i + 1], (long long)o[i]));
        if (o[s->n_items] != s->n_rows)
            CHECK_ST(mieb_fail(MIEB_ERR_BAD_DATA, "%s: /offsets[%lld] = %lld, but /embeddings has %lld rows", fn,
                               (long long)s->n_items, (long long)o[s->n_items], (long long)s->n_rows));
    }
    r->info.multivector = multi;
    bool has_rs = false, has_nr = false; /* a failed lookup is reported, not taken for "absent" */
    CHECK_ST(mieb_h5_attr_find(f, "row_start", fn, "/", &has_rs));
    CHECK_ST(mieb_h5_attr_find(f, "n_rows", fn, "/", &has_nr));
    if (is_shard || has_rs || has_nr) {
        CHECK_ST(mieb_h5_attr_i64(f, "row_start", fn, "/", &s->item_start));
        CHECK_ST(mieb_h5_attr_i64(f, "n_rows", fn, "/", &v));
        if (v != s->n_items)
            CHECK_ST(mieb_fail(MIEB_ERR_BAD_DATA, "%s: attribute n_rows = %lld, but the file holds %lld items%s", fn,
                               (long long)v, (long long)s->n_items, multi ? " (/offsets)" : " (/embeddings rows)"));
        if (s->item_start < 0)
            CHECK_ST(mieb_fail(MIEB_ERR_BAD_DATA, "%s: attribute row_start = %lld is negative", fn,
                               (long long)s->item_start));
    }
    s->has_row_index = mieb_h5_exists(f, "/row_index");
    if (s->has_row_index) {
        hid_t ri;
        int64_t d[2];
        CHECK_ST(mieb_h5_dset_open(f, fn, "/row_index", 1, 1, s->file_size, &ri, NULL, d));
        H5Dclose(ri);
        if (d[0] != s->n_items)
            CHECK_ST(mieb_fail(MIEB_ERR_BAD_DATA, "%s: /row_index has %lld entries, expected %lld", fn,
                               (long long)d[0], (long long)s->n_items));
    }
#undef CHECK_ST
done:
    if (mt >= 0)
        H5Tclose(mt);
    if (ds >= 0)
        H5Dclose(ds);
    if (f >= 0)
        H5Fclose(f);
    mieb_h5_unlock();
    return st;
}

static int cmp_shard(const void *a, const void *b)
{
    const struct emb_shard *x = a, *y = b;
    if (x->item_start != y->item_start)
        return x->item_start < y->item_start ? -1 : 1;
    return (x->n_items > y->n_items) - (x->n_items < y->n_items);
}

/* Sort by item_start; every item in exactly one shard; fill row_base, global offsets, info. */
static mieb_status check_cover(struct mieb_emb_role *r)
{
    qsort(r->sh, (size_t)r->n_shards, sizeof *r->sh, cmp_shard);
    int64_t next = 0, rows = 0;
    for (int i = 0; i < r->n_shards; i++) {
        struct emb_shard *s = &r->sh[i];
        const struct emb_shard *pv = i ? &r->sh[i - 1] : NULL;
        if (s->item_start < next)
            return mieb_fail(MIEB_ERR_BAD_DATA,
                             "%s (row_start=%lld, n_rows=%lld) and %s (row_start=%lld, n_rows=%lld) overlap: "
                             "rows %lld..%lld are in both",
                             pv->path, (long long)pv->item_start, (long long)pv->n_items, s->path,
                             (long long)s->item_start, (long long)s->n_items, (long long)s->item_start,
                             (long long)((next < s->item_start + s->n_items ? next : s->item_start + s->n_items) - 1));
        if (s->item_start > next) {
            if (pv)
                return mieb_fail(MIEB_ERR_BAD_DATA,
                                 "%s (row_start=%lld, n_rows=%lld) and %s (row_start=%lld): rows %lld..%lld are in "
                                 "no shard",
                                 pv->path, (long long)pv->item_start, (long long)pv->n_items, s->path,
                                 (long long)s->item_start, (long long)next, (long long)(s->item_start - 1));
            return mieb_fail(MIEB_ERR_BAD_DATA, "%s: row_start=%lld: rows 0..%lld are in no shard (n_rows of the "
                             "shards must cover every row from 0)", s->path, (long long)s->item_start,
                             (long long)(s->item_start - 1));
        }
        s->row_base = rows;
        next += s->n_items;
        rows += s->n_rows;
        if (s->has_row_index != r->sh[0].has_row_index)
            return mieb_fail(MIEB_ERR_BAD_DATA, "%s %s /row_index but %s %s", s->path,
                             s->has_row_index ? "has" : "lacks", r->sh[0].path,
                             r->sh[0].has_row_index ? "has it" : "does not");
    }
    r->info.n_items = next;
    r->info.n_rows = rows;
    r->info.dtype = r->sh[0].dtype;
    r->info.n_shards = r->n_shards;
    r->info.has_row_index = r->sh[0].has_row_index;
    if (r->info.multivector) {
        r->offsets = malloc((size_t)(next + 1) * sizeof *r->offsets);
        if (!r->offsets)
            return mieb_fail(MIEB_ERR_OOM, "%s: out of memory for offsets", r->sh[0].path);
        r->offsets[0] = 0;
        for (int i = 0; i < r->n_shards; i++)
            for (int64_t k = 0; k < r->sh[i].n_items; k++)
                r->offsets[r->sh[i].item_start + k + 1] = r->sh[i].row_base + r->sh[i].local_off[k + 1];
    }
    return MIEB_OK;
}

/* List the role's files into r->sh: the single file, or all M shards (each exactly once). */
static mieb_status discover(struct mieb_emb_role *r, const char *dir)
{
    char single[4096], name[4096];
    struct stat sb;
    if (snprintf(single, sizeof single, "%s/%s.h5", dir, r->role) >= (int)sizeof single)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "%s/%s.h5: path too long", dir, r->role);
    bool have_single = stat(single, &sb) == 0;
    long m_all = -1;
    char *first = NULL, **by_k = NULL;
    mieb_status st = MIEB_OK;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        long k, m;
        if (!parse_shard_name(e->d_name, r->role, &k, &m))
            continue;
        if (snprintf(name, sizeof name, "%s/%s", dir, e->d_name) >= (int)sizeof name) {
            st = mieb_fail(MIEB_ERR_INVALID_ARG, "%s/%s: path too long", dir, e->d_name);
            break;
        }
        if (have_single) {
            st = mieb_fail(MIEB_ERR_BAD_DATA, "%s and %s: role '%s' has both a single file and shards", single,
                           name, r->role);
            break;
        }
        if (m < 1 || m > MAX_SHARDS || k >= m) {
            st = mieb_fail(MIEB_ERR_BAD_DATA, "%s: shard number %ld of %ld is impossible", name, k, m);
            break;
        }
        if (m_all < 0) {
            m_all = m;
            first = strdup(name);
            by_k = calloc((size_t)m, sizeof *by_k);
            if (!first || !by_k) {
                st = mieb_fail(MIEB_ERR_OOM, "%s: out of memory", name);
                break;
            }
        } else if (m != m_all) {
            st = mieb_fail(MIEB_ERR_BAD_DATA, "%s and %s disagree on the number of shards (%ld vs %ld)", first, name,
                           m_all, m);
            break;
        }
        if (by_k[k]) { /* e.g. 00001-of-00004.h5 and 0000001-of-00004.h5 */
            st = mieb_fail(MIEB_ERR_BAD_DATA, "%s and %s are both shard %ld", by_k[k], name, k);
            break;
        }
        if (!(by_k[k] = strdup(name))) {
            st = mieb_fail(MIEB_ERR_OOM, "%s: out of memory", name);
            break;
        }
    }
    if (d)
        closedir(d);
    if (st == MIEB_OK && !have_single && m_all < 0)
        st = mieb_fail(MIEB_ERR_NOT_FOUND, "%s: no such file (and no shards %s-NNNNN-of-MMMMM.h5)", single, r->role);
    for (long k = 0; st == MIEB_OK && k < m_all; k++)
        if (!by_k[k])
            st = mieb_fail(MIEB_ERR_NOT_FOUND, "%s/%s-%05ld-of-%05ld.h5: shard missing (found other shards such as %s)",
                           dir, r->role, k, m_all, first);
    if (st == MIEB_OK) {
        int n = have_single ? 1 : (int)m_all;
        r->sh = calloc((size_t)n, sizeof *r->sh);
        if (!r->sh) {
            st = mieb_fail(MIEB_ERR_OOM, "%s: out of memory", dir);
        } else {
            r->n_shards = n;
            r->sharded = !have_single;
            for (int k = 0; k < n; k++) {
                r->sh[k].path = have_single ? strdup(single) : by_k[k];
                if (!have_single)
                    by_k[k] = NULL;
            }
        }
    }
    for (long k = 0; by_k && k < m_all; k++)
        free(by_k[k]);
    free(by_k);
    free(first);
    return st;
}

mieb_status mieb_emb_role_open(const char *emb_dir, const char *task, const char *split, const char *subset,
                               const char *role, enum mieb_emb_rows rows, struct mieb_emb_role **out)
{
    char dir[4096];
    struct mieb_emb_role *r = calloc(1, sizeof *r);
    mieb_status st;
    if (!r)
        return mieb_fail(MIEB_ERR_OOM, "out of memory opening role %s", role);
    r->cur = -1;
    r->cur_file = r->cur_dset = r->cur_memtype = -1;
    r->task = strdup(task), r->split = strdup(split), r->subset = strdup(subset), r->role = strdup(role);
    if (!r->task || !r->split || !r->subset || !r->role) {
        mieb_emb_role_close(r);
        return mieb_fail(MIEB_ERR_OOM, "out of memory opening role %s", role);
    }
    if (snprintf(dir, sizeof dir, "%s/%s/%s/%s", emb_dir, task, split, subset) >= (int)sizeof dir)
        st = mieb_fail(MIEB_ERR_INVALID_ARG, "%s/%s/%s/%s: path too long", emb_dir, task, split, subset);
    else
        st = discover(r, dir);
    for (int i = 0; st == MIEB_OK && i < r->n_shards; i++)
        st = validate_file(r, &r->sh[i], r->sharded);
    if (st == MIEB_OK)
        st = check_cover(r);
    if (st == MIEB_OK && rows == MIEB_EMB_EVERY_ROW)
        st = mieb_emb_order_load(r);
    if (st != MIEB_OK) {
        mieb_emb_role_close(r);
        return st;
    }
    *out = r;
    return MIEB_OK;
}

void mieb_emb_role_close(struct mieb_emb_role *r)
{
    if (!r)
        return;
    mieb_h5_lock();
    mieb_emb_shard_release(r);
    mieb_h5_unlock();
    for (int i = 0; i < r->n_shards; i++) {
        free(r->sh[i].path);
        free(r->sh[i].local_off);
    }
    free(r->sh);
    free(r->offsets);
    free(r->file_item);
    free(r->task);
    free(r->split);
    free(r->subset);
    free(r->role);
    free(r);
}
