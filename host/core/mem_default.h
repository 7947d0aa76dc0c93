/**
 * mem_default.h - the default memory budget (`run --mem-limit`) on shared machines.
 *
 * Half of the smallest of: physical RAM, the memory limit of this process's cgroup
 * (v2: memory.max of its cgroup and of every ancestor, "max" meaning none; v1: the memory
 * controller's memory.limit_in_bytes, likewise up the tree), and Slurm's allocation
 * (SLURM_MEM_PER_NODE, or SLURM_MEM_PER_CPU times SLURM_CPUS_ON_NODE, else
 * SLURM_CPUS_PER_TASK, else 1; in MB; 0 meaning the whole node). A job that gets 16 GB of a
 * 512 GB node then defaults to 8 GB, not 256.
 */
#ifndef MIEB_CORE_MEM_DEFAULT_H
#define MIEB_CORE_MEM_DEFAULT_H

#include <stddef.h>

/**
 * The default --mem-limit in bytes. `root` prefixes /proc/self/cgroup and /sys/fs/cgroup
 * (NULL or "" for the real ones; tests point it at a fake tree); Slurm's variables are read
 * from the environment. `phys_bytes` is physical RAM (0: unknown). When nothing is known the
 * result is 4 GiB. `why` (may be NULL) receives where the limit came from, for `-v`.
 */
size_t mieb_mem_default(const char *root, size_t phys_bytes, char *why, size_t why_len);

/** mieb_mem_default for this machine: its physical RAM (sysconf), its cgroups, its Slurm job. */
size_t mieb_mem_default_here(char *why, size_t why_len);

#endif
