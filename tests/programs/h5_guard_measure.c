/*
 * h5_guard_measure.c - measures the in-process HDF5 guard (host/hdf5/h5_guard.h) against the
 * forked probe (h5_probe.h) on the same files, for docs/BAD_INPUT.md and
 * tests/py/test_hdf5_guards.py.
 *
 *   h5_guard_measure guard FILE...        the guarded readers walk every object: open (heap
 *                                         and root checks), each header on its path, each
 *                                         object's attribute messages, every attribute
 *                                         (strings through the raw reader), every dataset
 *                                         opened with its storage checks and read
 *   h5_guard_measure probe [--data] [--timeout S] [--mem MIB] FILE...
 *                                         the forked probe (metadata, or the data too)
 *   h5_guard_measure walk [--data] FILE... the probe's walk in this process, no guard, no fork
 *                                         (under ASan: does libhdf5 read out of bounds?)
 *   h5_guard_measure time N FILE...       seconds per file for N rounds of: bare H5Fopen and
 *                                         close, the guard's checks, the probe (metadata), the
 *                                         probe (data)
 *   --ballast MIB (any mode, first)       touch MIB MiB of memory first: fork copies the page
 *                                         tables of a parent that holds a corpus
 * One line per file: FILE<TAB>VERDICT<TAB>MILLISECONDS[<TAB>MESSAGE]; exit 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "h5_probe.h"
#include "hdf5/h5_guard.h"
#include "hdf5/h5_read.h"
#include "hdf5/h5_util.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

struct gwalk {
    hid_t file;
    const char *fname;
    int64_t fsize;
    bool read_data;
    mieb_status st;
};

static herr_t read_attr(hid_t loc, const char *name, const H5A_info_t *info, void *op)
{
    (void)info;
    struct gwalk *g = op;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT), t = a >= 0 ? H5Aget_type(a) : -1;
    if (t >= 0 && H5Tget_class(t) == H5T_STRING) {
        char *s = NULL; /* the guarded string reader (raw heap IDs) */
        mieb_status st = mieb_h5_attr_str(loc, name, g->fname, "attr", &s);
        free(s);
        if (st == MIEB_ERR_BAD_DATA && strstr(mieb_last_error(), "single value") == NULL)
            g->st = st;
    } else if (t >= 0) {
        hid_t mt = H5Tget_native_type(t, H5T_DIR_ASCEND), sp = H5Aget_space(a);
        hssize_t n = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
        size_t esz = mt >= 0 ? H5Tget_size(mt) : 0;
        void *buf = n >= 0 && esz ? calloc((size_t)n + 1, esz) : NULL;
        if (buf && H5Aread(a, mt, buf) >= 0 && H5Tdetect_class(mt, H5T_VLEN) > 0)
            H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, buf);
        free(buf);
        if (sp >= 0)
            H5Sclose(sp);
        if (mt >= 0)
            H5Tclose(mt);
    }
    if (t >= 0)
        H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
    H5Eclear2(H5E_DEFAULT);
    return 0;
}

static void guard_dataset(struct gwalk *g, const char *path)
{
    hid_t ds = -1;
    int rank = 0;
    int64_t dims[2];
    mieb_status st = mieb_h5_dset_open(g->file, g->fname, path, 0, 32, g->fsize, &ds, &rank, dims);
    if (st != MIEB_OK) {
        if (st == MIEB_ERR_BAD_DATA && strstr(mieb_last_error(), "dimensions") == NULL)
            g->st = st;
        return;
    }
    if (g->read_data) {
        hid_t t = H5Dget_type(ds);
        if (H5Tget_class(t) == H5T_STRING && rank == 1) {
            char **s = NULL;
            int64_t n = 0;
            if (mieb_h5_read_strings(g->file, g->fname, path, g->fsize, &s, &n) == MIEB_OK)
                free(s);
        } else if (H5Tget_class(t) != H5T_STRING && H5Tdetect_class(t, H5T_VLEN) <= 0) {
            hid_t mt = H5Tget_native_type(t, H5T_DIR_ASCEND), sp = H5Dget_space(ds);
            hssize_t n = H5Sget_simple_extent_npoints(sp);
            size_t esz = mt >= 0 ? H5Tget_size(mt) : 0;
            void *buf = n >= 0 && esz && (uint64_t)n * esz < (1ull << 31) ? malloc((size_t)n * esz + 1) : NULL;
            if (buf)
                (void)H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
            free(buf);
            if (mt >= 0)
                H5Tclose(mt);
            H5Sclose(sp);
        }
        H5Tclose(t);
    }
    H5Dclose(ds);
    H5Eclear2(H5E_DEFAULT);
}

/* Each link of the group at path, checked before HDF5 follows it; then the object itself. */
static void guard_walk(struct gwalk *g, const char *path, int depth)
{
    bool found = false;
    if (depth > 16 || g->st != MIEB_OK)
        return;
    if (strcmp(path, "/") != 0 && (mieb_h5_lookup(g->file, path, g->fname, &found) != MIEB_OK || !found)) {
        if (!found && mieb_last_error()[0] && strstr(mieb_last_error(), "corrupt"))
            g->st = MIEB_ERR_BAD_DATA;
        return;
    }
    hid_t o = H5Oopen(g->file, path, H5P_DEFAULT);
    if (o < 0) {
        H5Eclear2(H5E_DEFAULT);
        return;
    }
    bool has = false;
    mieb_status st = mieb_h5_attr_find(o, "\x01none", g->fname, path, &has); /* the attribute check */
    if (st == MIEB_ERR_BAD_DATA) {
        g->st = st;
    } else if (st == MIEB_OK) {
        H5Aiterate2(o, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, read_attr, g);
        H5Eclear2(H5E_DEFAULT);
    }
    H5I_type_t type = H5Iget_type(o);
    if (type == H5I_DATASET && g->st == MIEB_OK) {
        guard_dataset(g, path);
    } else if (type == H5I_GROUP && g->st == MIEB_OK) {
        hsize_t n = 0;
        H5G_info_t gi;
        if (H5Gget_info(o, &gi) >= 0)
            n = gi.nlinks;
        for (hsize_t i = 0; i < n && i < 4096 && g->st == MIEB_OK; i++) {
            char name[512], child[1200];
            if (H5Lget_name_by_idx(o, ".", H5_INDEX_NAME, H5_ITER_NATIVE, i, name, sizeof name, H5P_DEFAULT) <= 0)
                break;
            snprintf(child, sizeof child, "%s%s%s", path, strcmp(path, "/") ? "/" : "", name);
            guard_walk(g, child, depth + 1);
        }
    }
    H5Eclear2(H5E_DEFAULT);
    H5Oclose(o);
}

/* MIEB_OK: read through; BAD_DATA: a check refused it (the message says which). */
static mieb_status guard_file(const char *path, bool read_data)
{
    struct gwalk g = {-1, path, 0, read_data, MIEB_OK};
    mieb_status st = mieb_h5_open_ro(path, &g.file, &g.fsize);
    if (st != MIEB_OK)
        return st;
    mieb_h5_lock();
    guard_walk(&g, "/", 0);
    H5Fclose(g.file);
    mieb_h5_unlock();
    return g.st;
}

static const char *verdict_name(enum mieb_h5_probe_verdict v)
{
    static const char *const n[] = {"clean", "h5-error", "crash", "timeout", "memory"};
    return n[v];
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: h5_guard_measure guard|probe|walk|time ... FILE...\n");
        return 2;
    }
    mieb_log_set(NULL, NULL, MIEB_LOG_ERROR);
    mieb_h5_init();
    const char *mode = argv[1];
    struct mieb_h5_probe_opts po = {10, 1ull << 30, false};
    int i = 2, rounds = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--data"))
            po.read_data = true;
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
            po.timeout_s = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--mem") && i + 1 < argc)
            po.mem_bytes = (uint64_t)atoll(argv[++i]) << 20;
        else if (!strcmp(argv[i], "--ballast") && i + 1 < argc) {
            size_t n = (size_t)atoll(argv[++i]) << 20;
            char *b = malloc(n);
            if (b)
                memset(b, 1, n); /* kept to the end: resident, in the page tables */
        }
    }
    if (!strcmp(mode, "time"))
        rounds = atoi(argv[i++]);
    for (; i < argc; i++) {
        const char *f = argv[i];
        if (!strcmp(mode, "guard")) {
            double t0 = now_s();
            mieb_status st = guard_file(f, true);
            printf("%s\t%s\t%.3f\t%s\n", f, st == MIEB_OK ? "read" : st == MIEB_ERR_BAD_DATA ? "refused" : "error",
                   1e3 * (now_s() - t0), st == MIEB_OK ? "" : mieb_last_error());
        } else if (!strcmp(mode, "probe")) {
            enum mieb_h5_probe_verdict v;
            double t0 = now_s();
            mieb_status st = mieb_h5_probe_file(f, &po, &v);
            printf("%s\t%s\t%.3f\t%s\n", f, verdict_name(v), 1e3 * (now_s() - t0),
                   st == MIEB_OK ? "" : mieb_last_error());
        } else if (!strcmp(mode, "walk")) {
            double t0 = now_s();
            enum mieb_h5_probe_verdict v = mieb_h5_probe_walk_here(f, po.read_data);
            printf("%s\t%s\t%.3f\n", f, verdict_name(v), 1e3 * (now_s() - t0));
        } else if (!strcmp(mode, "time")) {
            double t[4] = {0};
            for (int r = 0; r < rounds; r++) {
                double t0 = now_s();
                mieb_h5_lock();
                hid_t h = H5Fopen(f, H5F_ACC_RDONLY, H5P_DEFAULT);
                if (h >= 0)
                    H5Fclose(h);
                mieb_h5_unlock();
                double t1 = now_s();
                (void)guard_file(f, false);
                double t2 = now_s();
                enum mieb_h5_probe_verdict v;
                po.read_data = false;
                (void)mieb_h5_probe_file(f, &po, &v);
                double t3 = now_s();
                po.read_data = true;
                (void)mieb_h5_probe_file(f, &po, &v);
                double t4 = now_s();
                t[0] += t1 - t0, t[1] += t2 - t1, t[2] += t3 - t2, t[3] += t4 - t3;
            }
            printf("%s\topen %.3f\tguard %.3f\tprobe %.3f\tprobe+data %.3f ms\n", f, 1e3 * t[0] / rounds,
                   1e3 * t[1] / rounds, 1e3 * t[2] / rounds, 1e3 * t[3] / rounds);
        }
        fflush(stdout);
    }
    return 0;
}
