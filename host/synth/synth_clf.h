/**
 * synth_clf.h - the synthetic generators of the two classification families (declared here
 * so synth.h stays its owner's): ImageClassification (synth_classification.c) and
 * ZeroShotClassification (synth_zeroshot.c). Same contract as mieb_synth_retrieval().
 */
#ifndef MIEB_SYNTH_CLF_H
#define MIEB_SYNTH_CLF_H

#include "synth.h"

/**
 * ImageClassification: train_labels / eval_labels and planted-class `train` / `eval` roles
 * (class centre + noise; class id 3 skipped; one class smaller than samples_per_label);
 * for about half the tasks also train_idx, mteb's few-shot draw (fewshot_sample.h).
 * VOC2007 gets multilabel targets (CSR *_labels_indptr / *_labels_flat, 1-3 labels per image).
 * Roles are always single-vector (a MaxSim suite still gets one vector per image here).
 */
mieb_status mieb_synth_classification(const struct mieb_synth_opts *o, const struct mieb_task *t);

/**
 * ZeroShotClassification: one `candidate_labels` row per class, `eval` images near their
 * class's row (some far, some exact multiples of it: ties), eval_labels = the class row.
 * Tasks scored by softmax(100*cosine) (modalities ["image","text"]) get single-vector roles
 * even in a MaxSim suite, as the zero-shot driver requires.
 */
mieb_status mieb_synth_zeroshot(const struct mieb_synth_opts *o, const struct mieb_task *t);

#endif
