"""mteb's own leaderboard numbers of a results folder; runs in .venv-mteb (mteb with its stack).

    python mteb_leaderboard_driver.py CACHE OUT.json BENCHMARK [BENCHMARK ...]

CACHE is an mteb cache folder (CACHE/results/<org>__<model>/<revision>/<Task>.json). For each
benchmark, ResultCache.load_results (local files only) then BenchmarkResults.get_benchmark_result(),
the summary table mteb's leaderboard shows: OUT.json holds, per benchmark, its rows as
{"Model", "Mean (TaskType)", <task type>..., "Rank (Borda)"} with NaN as null.
"""
import json
import math
import sys
import warnings


def main() -> int:
    import mteb

    warnings.filterwarnings("ignore")
    cache_dir, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    cache = mteb.ResultCache(cache_path=cache_dir)
    report = {}
    for name in names:
        bench = mteb.get_benchmark(name)
        df = cache.load_results(tasks=bench, include_remote=False, require_model_meta=False).get_benchmark_result()
        rows = []
        for rec in df.to_dict(orient="records"):
            rows.append({k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in rec.items()
                         if isinstance(v, (int, float, str)) or v is None})
        report[name] = rows
    with open(out, "w") as f:
        json.dump(report, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
