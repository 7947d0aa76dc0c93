/**
 * fingerprint.h - a short hash of the inputs of one retrieval subset, recorded in every
 * partial so `merge` can refuse parts computed from different task data or embeddings
 * (and parts computed from inputs other than the ones it is given).
 *
 * It covers the whole ground truth (ids, qrels, candidates), the shapes and dtypes of both
 * roles, every query embedding, and one corpus embedding per mteb chunk (its first item)
 * plus the last one: cheap enough for every part to compute (a part reads only its own
 * chunks), and different for any two real embedding exports. It is a consistency check,
 * not a proof: a corpus edited only inside a chunk, away from the sampled items, would pass.
 */
#ifndef MIEB_PARTS_FINGERPRINT_H
#define MIEB_PARTS_FINGERPRINT_H

#include "../families/retrieval_post.h"

/** 64-bit FNV-1a of the inputs as 16 lowercase hex digits in out (>= 17 bytes). */
mieb_status mieb_ret_fingerprint(const struct mieb_ret_subset *s, struct mieb_ret_roles *roles, char *out);

#endif
