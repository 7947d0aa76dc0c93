/**
 * task_shards.h - splitting a run's task list over K processes (`run --shard-index I
 * --num-shards K`, the Slurm array) so that each gets about the same work, not the same
 * number of tasks: MIEB's tasks differ in cost by five orders of magnitude (an ImageNet-sized
 * linear probe against a 400-query retrieval task).
 */
#ifndef MIEB_PLAN_TASK_SHARDS_H
#define MIEB_PLAN_TASK_SHARDS_H

#include "../config/registry.h"
#include "../core/status.h"

/**
 * Relative cost of scoring a task, in multiply-adds per embedding dimension, from the sizes
 * the registry states (n_queries, n_corpus, n_train, n_test, n_classes, the probe's shots and
 * experiments): retrieval Q x N plus the selection per query; the linear probe E x C x
 * (100 L + n_test) (two products of the L drawn rows per L-BFGS iteration, 50 iterations
 * assumed, then predict); zero-shot n_test x C; clustering 20 x n_test x k; compositionality and
 * STS a few products per sample; an aggregate its sub-task's cost; plus a fixed cost per task
 * (reading, writing). A task whose sizes are not stated costs only the fixed part.
 */
double mieb_task_cost(const struct mieb_registry *reg, const struct mieb_task *t);

/**
 * Assign tasks[0..n) to k >= 1 shards: by decreasing cost (list position breaking ties), each
 * task to the shard with the least cost so far (the lowest index breaking ties). Every process
 * computes the same assignment from the same list. With equal costs this is task j -> shard
 * j % k. shard[j] receives the shard of tasks[j].
 */
mieb_status mieb_shard_assign(const struct mieb_registry *reg, const struct mieb_task *const *tasks, int n, int k,
                              int *shard);

#endif
