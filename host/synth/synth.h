/**
 * synth.h - the deterministic synthetic suite behind `mieb-eval synth`.
 *
 * One generator per task family, each in host/synth/synth_<family>.c with the signature of
 * mieb_synth_retrieval(); cmd_synth.c parses the command line and dispatches on the
 * task's family. Everything is derived from (seed, task, split, subset) through a small
 * portable PRNG, and embeddings are built from integers scaled by a power of two, so the
 * files are bit-identical on every machine and compiler (no libm, no FMA contraction),
 * and one task's files do not depend on which other tasks were generated.
 */
#ifndef MIEB_SYNTH_SYNTH_H
#define MIEB_SYNTH_SYNTH_H

#include <stdbool.h>
#include <stdint.h>

#include "../config/registry.h"
#include "../core/status.h"
#include "../emb/embeddings.h"
#include "../hdf5/h5_write.h"

enum mieb_synth_sim { MIEB_SYNTH_COSINE = 0, MIEB_SYNTH_DOT = 1, MIEB_SYNTH_MAXSIM = 2 };

struct mieb_synth_opts {
    const char *out_dir;     /* writes <out>/task-data/<Task>.h5 and <out>/embeddings/... */
    uint64_t seed;
    double scale;            /* fraction of the registry's n_queries / n_corpus */
    int dim;
    enum mieb_emb_dtype dtype;
    int shards;              /* <= 1: single role files */
    bool compress;           /* chunked + shuffle + deflate */
    enum mieb_synth_sim sim; /* MaxSim writes multi-vector roles with /offsets */
};

/* ---- PRNG: xoshiro256** seeded by splitmix64 (public-domain reference algorithms) ---- */
struct mieb_rng {
    uint64_t s[4];
};
void mieb_rng_seed(struct mieb_rng *r, uint64_t seed);
/** Seed from the suite seed and a list of strings (task, split, subset, purpose). */
void mieb_rng_seed_for(struct mieb_rng *r, uint64_t seed, const char *a, const char *b, const char *c,
                       const char *d);
uint64_t mieb_rng_next(struct mieb_rng *r);
/** Uniform integer in [0, n), n >= 1, without modulo bias. */
uint64_t mieb_rng_below(struct mieb_rng *r, uint64_t n);
/** True with probability num/den. */
bool mieb_rng_chance(struct mieb_rng *r, uint64_t num, uint64_t den);
/** Bell-shaped integer noise in [-2*amp, 2*amp] (Irwin-Hall sum of four uniforms, halved). */
int32_t mieb_rng_noise(struct mieb_rng *r, int32_t amp);

/* ---- shared helpers ---- */
/** Items for a registry count: max(min, round(n * scale / parts)). */
int64_t mieb_synth_count(double n, double scale, int parts, int64_t min);
/** Integer components -> float32 (exact: value = k * 2^-9). */
static inline float mieb_synth_value(int32_t k) { return (float)k * 0x1p-9f; }

/** One group of a task-data file: /<split>/<subset> and its roles; *n_out counts what it made. */
typedef mieb_status (*mieb_synth_group_fn)(const struct mieb_synth_opts *o, const struct mieb_task *t,
                                           hid_t file, const char *split, const char *subset, void *arg,
                                           int64_t *n_out);

/**
 * The skeleton every family's generator shares: create the task file, call fn for each
 * split and subset in registry order, then commit the file (abort it, leaving nothing, when
 * a group fails). *total (may be NULL) is the sum of the groups' counts.
 */
mieb_status mieb_synth_groups(const struct mieb_synth_opts *o, const struct mieb_task *t, mieb_synth_group_fn fn,
                              void *arg, int64_t *total);

/**
 * Write one role under <out>/embeddings from integer vectors vec [n_items, dim].
 * With MaxSim each item becomes 1..4 token rows: token 0 is the item vector, the others
 * add noise drawn from a hash of the item vector itself, so items with identical vectors
 * (duplicates, a query and its own image in the corpus) get identical token blocks and
 * stay exact ties, in any role.
 */
mieb_status mieb_synth_write_role(const struct mieb_synth_opts *o, const struct mieb_task *t, const char *split,
                                  const char *subset, const char *role, const int32_t *vec, int64_t n_items);

/* ---- family generators (one file each) ---- */
/** Any2AnyRetrieval, Any2AnyMultilingualRetrieval, DocumentUnderstanding, VisionCentricQA. */
mieb_status mieb_synth_retrieval(const struct mieb_synth_opts *o, const struct mieb_task *t);
/** ImageClustering: eval_labels + planted-cluster `eval` role (synth_clustering.c). */
mieb_status mieb_synth_clustering(const struct mieb_synth_opts *o, const struct mieb_task *t);
/** Compositionality: group attributes n_samples/n_images/n_texts + roles images, texts (synth_compositionality.c). */
mieb_status mieb_synth_compositionality(const struct mieb_synth_opts *o, const struct mieb_task *t);
/** Visual STS (not the aggregates): gold + min/max_score + roles sentence1, sentence2 (synth_sts.c). */
mieb_status mieb_synth_sts(const struct mieb_synth_opts *o, const struct mieb_task *t);

#endif
