"""pytest plugin for seed sweeps (scripts/seed-sweep.sh): every integer seed given to
numpy.random.default_rng or random.Random is shifted by $SEED_SHIFT, so the randomized tests
draw other data against the same references. Seed 42 is left alone: it is mteb's and
scikit-learn's own seed (the VOC2007 draw, MiniBatchKMeans, the few-shot shuffles), which the
program reproduces and so must keep.

    SEED_SHIFT=1000 PYTHONPATH=tests/py pytest -p helpers.seedshift tests/py/test_clf_metrics.py
"""
from __future__ import annotations

import os
import random

import numpy as np

SHIFT = int(os.environ.get("SEED_SHIFT", "0"))
_default_rng = np.random.default_rng
_random_seed = random.Random.seed


def _shifted(seed):
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and int(seed) != 42:
        return int(seed) + SHIFT
    return seed


def default_rng(seed=None, *args, **kwargs):
    return _default_rng(_shifted(seed), *args, **kwargs)


def _seed(self, a=None, version=2):
    return _random_seed(self, _shifted(a), version)


if SHIFT:
    np.random.default_rng = default_rng
    random.Random.seed = _seed
