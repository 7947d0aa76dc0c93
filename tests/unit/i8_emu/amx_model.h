/**
 * amx_model.h - a model of the AMX tile registers and the instructions the int8 screen's
 * AMX kernel uses (LDTILECFG, TILELOADD, TILESTORED, TILEZERO, TDPBSSD, TILERELEASE),
 * written from the pseudocode of Intel's Architecture Instruction Set Extensions
 * Programming Reference (chapter "Intel AMX"). Tests only (i8_emu.h).
 *
 * It also checks what the hardware would fault on (#UD): a tile used before LDTILECFG, a
 * palette other than 1, rows over 16 or bytes per row over 64, and TDPBSSD's shape rules
 * (A's rows = C's rows, A's bytes per row = 4 x B's rows, B's bytes per row = C's); a kernel
 * that breaks one aborts the test. One set of tiles per process: the tests run one thread.
 */
#ifndef MIEB_TEST_AMX_MODEL_H
#define MIEB_TEST_AMX_MODEL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    int configured;
    uint16_t colsb[8];
    uint8_t rows[8];
    uint8_t t[8][16][64];
} amx_m;

static inline void amx_m_fault(const char *what)
{
    fprintf(stderr, "amx_model: %s (the hardware would raise #UD)\n", what);
    abort();
}

static inline void amx_m_tile_ok(int t)
{
    if (!amx_m.configured)
        amx_m_fault("tile used without a configuration");
    if (t < 0 || t > 7 || amx_m.rows[t] == 0)
        amx_m_fault("tile not configured");
}

/* The 64-byte configuration: palette (byte 0), start_row (1), colsb[16] (16..47), rows[16] (48..63). */
static inline void amx_m_loadconfig(const void *cfg)
{
    const uint8_t *b = (const uint8_t *)cfg;
    if (b[0] != 1)
        amx_m_fault("palette other than 1");
    memset(&amx_m, 0, sizeof amx_m);
    for (int t = 0; t < 8; t++) {
        memcpy(&amx_m.colsb[t], b + 16 + 2 * t, 2);
        amx_m.rows[t] = b[48 + t];
        if (amx_m.rows[t] > 16 || amx_m.colsb[t] > 64)
            amx_m_fault("tile larger than 16 rows x 64 bytes");
    }
    amx_m.configured = 1;
}

static inline void amx_m_loadd(int t, const void *base, int64_t stride)
{
    amx_m_tile_ok(t);
    memset(amx_m.t[t], 0, sizeof amx_m.t[t]);
    for (int r = 0; r < amx_m.rows[t]; r++)
        memcpy(amx_m.t[t][r], (const uint8_t *)base + r * stride, amx_m.colsb[t]);
}

static inline void amx_m_stored(int t, void *base, int64_t stride)
{
    amx_m_tile_ok(t);
    for (int r = 0; r < amx_m.rows[t]; r++)
        memcpy((uint8_t *)base + r * stride, amx_m.t[t][r], amx_m.colsb[t]);
}

static inline void amx_m_zero(int t)
{
    amx_m_tile_ok(t);
    memset(amx_m.t[t], 0, sizeof amx_m.t[t]);
}

static inline int32_t amx_m_dword(const uint8_t *row, int i)
{
    int32_t v;
    memcpy(&v, row + 4 * i, 4);
    return v;
}

/* TDPBSSD c, a, b: for each row m of c, each dword k of a's row and dword n of c's row,
   c.row[m].dword[n] += the four signed byte products of a.row[m].dword[k] and
   b.row[k].dword[n] (32-bit sums, wrapping). */
static inline void amx_m_dpbssd(int c, int a, int b)
{
    amx_m_tile_ok(c);
    amx_m_tile_ok(a);
    amx_m_tile_ok(b);
    if (amx_m.rows[a] != amx_m.rows[c] || amx_m.colsb[a] != 4 * amx_m.rows[b] ||
        amx_m.colsb[b] != amx_m.colsb[c] || c == a || c == b || a == b)
        amx_m_fault("TDPBSSD shapes or registers that do not fit");
    for (int m = 0; m < amx_m.rows[c]; m++)
        for (int n = 0; n < amx_m.colsb[c] / 4; n++) {
            uint32_t acc = (uint32_t)amx_m_dword(amx_m.t[c][m], n);
            for (int k = 0; k < amx_m.colsb[a] / 4; k++)
                for (int i = 0; i < 4; i++)
                    acc += (uint32_t)((int32_t)(int8_t)amx_m.t[a][m][4 * k + i] *
                                      (int32_t)(int8_t)amx_m.t[b][k][4 * n + i]);
            memcpy(amx_m.t[c][m] + 4 * n, &acc, 4);
        }
}

static inline void amx_m_release(void) { memset(&amx_m, 0, sizeof amx_m); }

#define _tile_loadconfig(cfg) amx_m_loadconfig(cfg)
#define _tile_loadd(t, base, stride) amx_m_loadd((t), (base), (stride))
#define _tile_stored(t, base, stride) amx_m_stored((t), (base), (stride))
#define _tile_zero(t) amx_m_zero(t)
#define _tile_dpbssd(c, a, b) amx_m_dpbssd((c), (a), (b))
#define _tile_release() amx_m_release()

#endif
