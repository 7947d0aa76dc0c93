/**
 * seq_max.h - the maximum of a float row as the sequential loop
 *     m = r[0]; for u = 1 .. n-1: if (r[u] > m) m = r[u];
 * finds it, computed in 16 lanes so that the compiler vectorises it. Each lane starts from
 * r[0] and keeps its value unless a strictly greater one comes, so a NaN other than r[0]
 * never enters, as in the loop (and a NaN r[0] stays). Only which of +0 and -0 a tie of
 * zeros keeps may differ; both callers (the logistic-regression loss's row maximum and
 * MaxSim's per-token maximum) go on with arithmetic that cannot see the sign of a zero.
 */
#ifndef MIEB_CORE_SEQ_MAX_H
#define MIEB_CORE_SEQ_MAX_H

#include <stdint.h>

/** max of r[0..n), n >= 1. */
static inline float mieb_seq_max(const float *r, int64_t n)
{
    if (n < 32) { /* a few values: the lanes would cost more than they save */
        float m = r[0];
        for (int64_t u = 1; u < n; u++)
            m = r[u] > m ? r[u] : m;
        return m;
    }
    float lane[16];
    for (int l = 0; l < 16; l++)
        lane[l] = r[0];
    int64_t u = 1;
    for (; u + 16 <= n; u += 16)
        for (int l = 0; l < 16; l++)
            lane[l] = r[u + l] > lane[l] ? r[u + l] : lane[l];
    float m = lane[0];
    for (int l = 1; l < 16; l++)
        m = lane[l] > m ? lane[l] : m;
    for (; u < n; u++)
        m = r[u] > m ? r[u] : m;
    return m;
}

#endif
