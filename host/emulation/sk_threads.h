/**
 * sk_threads.h - how many OpenMP threads scikit-learn's Cython loops use on this machine
 * (sklearn.utils._openmp_helpers._openmp_effective_n_threads with its defaults).
 *
 * Why it matters: some of those loops are fp32 reductions over static blocks of their
 * rows (MiniBatchKMeans' per-batch inertia, kmeans_minibatch.c), so their last bits, and
 * an early-stopping decision taken on them, depend on the thread count.
 *
 * sklearn's rule: OMP_NUM_THREADS when set (its first level, as omp_get_max_threads reads
 * it); otherwise the smallest of the CPUs this process may run on, the CPU quota of its
 * cgroup (cgroup v2 cpu.max, rounded up, as joblib's loky counts it) and the machine's
 * physical cores (SMT siblings counted once).
 */
#ifndef MIEB_EMULATION_SK_THREADS_H
#define MIEB_EMULATION_SK_THREADS_H

/** The thread count above, at least 1. */
int mieb_sk_openmp_threads(void);

#endif
