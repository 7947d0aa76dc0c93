/**
 * dtype.h - the stored dtype of an embedding role (FORMAT.md §2): float32, IEEE float16, or
 * bfloat16 (uint16 with attribute dtype="bfloat16"). The readers of host/io report it
 * (embeddings.h); the backends round to it where mteb computes in the embeddings' own dtype
 * (backend.h, compo_scores), so it sits here, below both.
 */
#ifndef MIEB_CORE_DTYPE_H
#define MIEB_CORE_DTYPE_H

enum mieb_emb_dtype { MIEB_EMB_F32 = 0, MIEB_EMB_F16 = 1, MIEB_EMB_BF16 = 2 };

#endif
