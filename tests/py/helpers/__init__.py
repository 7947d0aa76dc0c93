"""What the Python tests share; no tests here (ctest runs tests/py/test_*.py alone).

Imported as `helpers.<module>` with tests/py on the path (pytest puts it there for the tests;
bench/ and the drivers run by path add it themselves):

  mieb_tools           the build's programs (MIEB_BUILD_DIR), mteb's own reference code, the
                       .venv-mteb drivers' runner
  fmt_writer           FORMAT.md task-data and embedding files written with h5py
  io_helpers           the reader tests' files and build/tests/emb_dump
  mteb_ref             mteb's retrieval metrics and search loop, the reference of the retrieval tests
  mteb_pair_ref        mteb's Compositionality and Visual STS scoring, the reference of those tests
  seedshift            pytest plugin of scripts/seed-sweep.sh: moves the tests' seeds
  model_runs           tools/mieb-eval-model run in .venv-mteb, offline; a run's result files without times
Run in .venv-mteb (mteb with torch):
  mteb_inmem           in-memory tasks and the deterministic hash encoder (MODULE:CALLABLE
                       helpers.mteb_inmem:HashEncoder)
  fault_encoders       the hash encoder with one fault chosen by the environment (NaN rows,
                       wrong rows or widths, wrong types, a raise, slowness), and other models
                       under its name
  mteb_parity_driver   the mteb side of test_mteb_parity.py, run by path
  mteb_registry_dump   what the installed mteb says of each task, for test_registry_mteb.py, run by path
  tiny_clip            a tiny random CLIP in a Hugging Face cache, for test_score_model.py, run by path
"""
