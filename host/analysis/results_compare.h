/**
 * results_compare.h - key-by-key comparison of two mteb TaskResult files, for
 * `mieb-eval parity` (cmd_parity.c).
 *
 * Only the scores are compared: for each split, the entries are matched by hf_subset and
 * every key of an entry is compared recursively (numbers, strings, lists such as
 * scores_per_experiment, nested objects). `mteb_version` and the run's bookkeeping outside
 * `scores` (evaluation_time, date, kg_co2_emissions, evaluation_phases) are not scores.
 * A number passes when it is within the family's tolerance (the table in results_compare.c,
 * mirrored in docs/PARITY.md): "exact" families must agree after Python's 6-decimal rounding,
 * the others within an absolute difference. NaN (JSON NaN or null) equals NaN; a key, split or
 * subset present on one side only is a mismatch.
 */
#ifndef MIEB_ANALYSIS_RESULTS_COMPARE_H
#define MIEB_ANALYSIS_RESULTS_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "../config/registry.h"
#include "../core/status.h"

/** A family's tolerance: exact after 6-decimal rounding, or an absolute difference. */
struct mieb_tolerance {
    bool exact;     /* round(a, 6) == round(b, 6) (Python's rounding) */
    double abs_tol; /* used when !exact: |a - b| <= abs_tol */
};

/** The documented tolerance of a family (MIEB_FAMILY_UNKNOWN: exact). */
struct mieb_tolerance mieb_family_tolerance(enum mieb_family fam);
/** Short name of a family ("retrieval", "probe", ...), as parity prints it. */
const char *mieb_family_label(enum mieb_family fam);
/** A family from its label (as mieb_family_label prints it); MIEB_FAMILY_UNKNOWN if none. */
enum mieb_family mieb_family_from_label(const char *label);

/**
 * The family of a result file whose task the registry does not know, from the keys of its
 * first score entry (ndcg_at_10: retrieval; cosine_spearman: STS; image_acc:
 * compositionality; cluster_accuracy: clustering; scores_per_experiment: probe; accuracy:
 * zero-shot). MIEB_FAMILY_UNKNOWN when none matches.
 */
enum mieb_family mieb_family_from_result(const cJSON *result);

/** One difference found (key is a path such as "test/default/scores_per_experiment[2]/f1"). */
struct mieb_cmp_diff {
    char *key;
    char *ref;  /* the reference value as text ("(missing)" when absent) */
    char *cand; /* the candidate value as text */
    double diff; /* |ref - cand| for two numbers, else NaN */
};

/** The outcome of comparing one task. */
struct mieb_cmp_result {
    long n_compared;  /* leaf values compared */
    double max_diff;  /* largest |ref - cand| over numbers present on both sides (0 if none) */
    char *max_key;    /* where max_diff was seen (NULL if none) */
    int n_diffs;      /* values outside tolerance, keys or entries missing on one side */
    struct mieb_cmp_diff *diffs;
};

/**
 * Compare the "scores" of two TaskResult trees (cJSON, as parsed after
 * mieb_json_py_to_strict) under tolerance tol. *out is owned: free with mieb_cmp_result_free.
 * Fails only on allocation failure or when either tree has no "scores" object
 * (MIEB_ERR_BAD_DATA; the caller names the file).
 */
mieb_status mieb_results_compare(const cJSON *ref, const cJSON *cand, struct mieb_tolerance tol,
                                 struct mieb_cmp_result *out);
void mieb_cmp_result_free(struct mieb_cmp_result *r);

/** Read a JSON file as Python's json writes it (NaN, Infinity literals) into a cJSON tree. */
mieb_status mieb_read_py_json_file(const char *path, cJSON **out);

#endif
