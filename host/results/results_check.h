/**
 * results_check.h - is the result file already in the output folder a whole result of the
 * task? The one rule `run --overwrite-strategy never|only-missing` applies before it skips a
 * task: anything else (empty, cut short, not JSON, another task's, a split or subset
 * missing) is scored again, the file set aside (core/set_aside.h).
 */
#ifndef MIEB_RESULTS_RESULTS_CHECK_H
#define MIEB_RESULTS_RESULTS_CHECK_H

#include "../core/status.h"

/**
 * MIEB_OK when path holds a JSON object (Python's NaN and Infinity allowed) whose "task_name"
 * is task_name and whose "scores" object holds, for each of splits[0..n_splits), a list with
 * an object of "hf_subset" s and a "main_score" for each s of subsets[0..n_subsets) (other
 * splits and subsets may be there too: a result scored with fewer --eval-splits is not).
 * MIEB_ERR_NOT_FOUND when there is no file; otherwise MIEB_ERR_BAD_DATA (or MIEB_ERR_IO,
 * MIEB_ERR_OOM) with the error naming the file and what is wrong.
 */
mieb_status mieb_result_check(const char *path, const char *task_name, const char *const *splits, int n_splits,
                              const char *const *subsets, int n_subsets);

#endif
