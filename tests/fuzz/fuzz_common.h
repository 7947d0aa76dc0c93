/*
 * fuzz_common.h - helpers shared by the libFuzzer targets in tests/fuzz/.
 *
 * Every target parses outside input through the library's own entry points. The parsers
 * read files by path, so a target writes its input into a private temporary directory
 * (created once per process under $TMPDIR) and hands the path to the library. Nothing is
 * ever written outside that directory.
 */
#ifndef MIEB_FUZZ_COMMON_H
#define MIEB_FUZZ_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* nftw, memmem, mkdtemp */
#endif

#include <errno.h>
#include <ftw.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline void fuzz_log_sink(enum mieb_log_level lvl, const char *msg, void *user)
{
    (void)lvl, (void)msg, (void)user; /* the messages are checked by the Python tests, not here */
}

static inline int fuzz_rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

static char fuzz_dir_[512];
static inline void fuzz_cleanup(void) { nftw(fuzz_dir_, fuzz_rm_cb, 16, FTW_DEPTH | FTW_PHYS); }

/** The private temporary directory of this process (created on first use; aborts on failure). */
static const char *fuzz_tmpdir(void)
{
    char *dir = fuzz_dir_;
    if (!dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof fuzz_dir_, "%s/mieb-fuzz-XXXXXX", t && t[0] ? t : "/tmp");
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            abort();
        }
        atexit(fuzz_cleanup);
        mieb_log_set(fuzz_log_sink, NULL, MIEB_LOG_ERROR);
    }
    return dir;
}

/** mkdir -p of a path under the temp dir. */
static inline void fuzz_mkdirs(const char *path)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0700);
            *p = '/';
        }
    }
    mkdir(buf, 0700);
}

/** Write data to path (replacing it); aborts on failure (a harness problem, not a finding). */
static inline void fuzz_write(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
        perror(path);
        abort();
    }
}

/** Little-endian u32 from the input, advancing it (0 when short). */
static inline uint32_t fuzz_take_u32(const uint8_t **data, size_t *size)
{
    uint32_t v = 0;
    if (*size >= 4) {
        v = (uint32_t)(*data)[0] | (uint32_t)(*data)[1] << 8 | (uint32_t)(*data)[2] << 16 | (uint32_t)(*data)[3] << 24;
        *data += 4;
        *size -= 4;
    }
    return v;
}

#endif
