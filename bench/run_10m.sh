#!/usr/bin/env bash
# bench/run_10m.sh - corpus parts on a corpus larger than RAM, checked against brute force.
#
#   bench/run_10m.sh [BUILD_DIR] [BIG_DIR]      (defaults: build/, /work/big)
#   env: N_CORPUS (10000000), DIM (768), N_QUERIES (200), PARTS (4), MEM_LIMIT (4G), KEEP=1 keeps BIG_DIR
#
# 1. bench/gen_big_retrieval.py writes a synthetic retrieval task (float32, 20 corpus shards of
#    500,000 rows: 10M x 768 = 30.7 GB) into BIG_DIR, one shard at a time (skipped if present);
# 2. `mieb-eval run --corpus-parts PARTS --corpus-part I --mem-limit MEM_LIMIT` for I = 0..PARTS-1,
#    one after the other, each under /usr/bin/time -v (wall time, peak resident memory);
# 3. `mieb-eval merge --per-query` -> the result JSON and run.trec;
# 4. bench/bruteforce_topk.c (HDF5 C API + a plain dot loop, no mieb-eval code) computes the
#    exact top-10 of every query; its lists must equal run.trec's first 10 lines per query;
# 5. prints a summary (also BIG_DIR/summary.txt and BUILD_DIR/run_10m_summary.txt), then deletes
#    BIG_DIR unless KEEP=1.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
big="${2:-/work/big}"
N_CORPUS="${N_CORPUS:-10000000}" DIM="${DIM:-768}" N_QUERIES="${N_QUERIES:-200}"
PARTS="${PARTS:-4}" MEM_LIMIT="${MEM_LIMIT:-4G}"
py="$here/.venv/bin/python"
bin="$build/mieb-eval"
task=CIRRIT2IRetrieval
mkdir -p "$big"
cd "$here"

timed() { # timed NAME cmd...: /usr/bin/time -v into $big/NAME.time, stderr into $big/NAME.log
    local name="$1"; shift
    echo "== $name: $*" >&2
    /usr/bin/time -v -o "$big/$name.time" "$@" 2> "$big/$name.log"
}
field() { grep -F "$2" "$big/$1.time" | sed 's/.*: //'; }

if [ ! -f "$big/task-data/$task.h5" ]; then
    timed generate "$py" bench/gen_big_retrieval.py --out "$big" --n-corpus "$N_CORPUS" --dim "$DIM" \
        --n-queries "$N_QUERIES"
fi
corpus_bytes=$(du -cb "$big"/embeddings/$task/test/default/corpus-*.h5 | tail -1 | cut -f1)

rm -rf "$big/partials" "$big/out" "$big/pq"
common=(--task-data "$big/task-data" --embeddings "$big/embeddings" --output-folder "$big/out" --device cpu
        --progress plain -t "$task")
for ((i = 0; i < PARTS; i++)); do
    timed "part$i" "$bin" run "${common[@]}" --mem-limit "$MEM_LIMIT" --corpus-parts "$PARTS" --corpus-part "$i" \
        --partials-dir "$big/partials"
done
timed merge "$bin" merge --partials-dir "$big/partials" --task-data "$big/task-data" --embeddings "$big/embeddings" \
    --output-folder "$big/out" -t "$task" --per-query "$big/pq"

cmake --build "$build" --target bruteforce_topk >/dev/null
echo "== reference" >&2
/usr/bin/time -v -o "$big/reference.time" "$build/bench/bruteforce_topk" "$big/embeddings" "$task" test default 10 \
    > "$big/ref.tsv" 2> "$big/reference.log"

{
    echo "corpus: $N_CORPUS x $DIM float32 ($corpus_bytes bytes in $(ls "$big"/embeddings/$task/test/default/corpus-*.h5 | wc -l) shards),"\
         "$N_QUERIES queries; $PARTS parts, --mem-limit $MEM_LIMIT; machine: $(nproc) cores,"\
         "$(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo) RAM"
    printf '%-10s %12s %14s %10s %10s\n' step wall peak_RSS_MiB user_s sys_s
    for s in generate $(for ((i = 0; i < PARTS; i++)); do echo part$i; done) merge reference; do
        [ -f "$big/$s.time" ] || continue
        printf '%-10s %12s %14s %10s %10s\n' "$s" "$(field $s 'Elapsed (wall clock)')" \
            "$(awk -v k="$(field $s 'Maximum resident set size')" 'BEGIN {printf "%.0f", k / 1024}')" \
            "$(field $s 'User time')" "$(field $s 'System time')"
    done
    echo "partial files: $(du -cb "$big"/partials/$task/test/default/*.h5 | tail -1 | cut -f1) bytes"
    "$py" - "$big/pq/$task/test/default/run.trec" "$big/ref.tsv" <<'EOF'
import sys
from collections import defaultdict
run = defaultdict(list)
for line in open(sys.argv[1]):
    qid, _, doc, rank, score, _ = line.split()
    if len(run[qid]) < 10:
        run[qid].append((int(doc[1:]), score))
ref = defaultdict(list)
for line in open(sys.argv[2]):
    q, rank, row, score = line.split("\t")
    ref[f"q{int(q):05d}"].append((int(row), score.strip()))
same = sum(run[q] == ref[q] for q in ref)
ids = sum([r for r, _ in run[q]] == [r for r, _ in ref[q]] for q in ref)
print(f"top-10 agreement with brute force: {same} of {len(ref)} queries identical (rows and scores), "
      f"{ids} identical rows; queries in run.trec: {len(run)}")
for q in sorted(ref):
    if run[q] != ref[q]:
        print(" differs:", q, run[q][:3], ref[q][:3])
print("AGREEMENT: OK" if same == len(ref) == len(run) else "AGREEMENT: FAILED")
EOF
    grep -o '"ndcg_at_10": [0-9.]*' "$big"/out/results/*/*/$task.json | head -1
} | tee "$big/summary.txt"
cp "$big/summary.txt" "$build/run_10m_summary.txt" # kept when BIG_DIR goes
if [ "${KEEP:-0}" != 1 ]; then
    rm -rf "$big"
fi
