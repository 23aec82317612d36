#!/usr/bin/env bash
# An upgrade that changes no vector keeps every cached vector (docs/performance.md, "An upgrade that changes no
# vector"): a small run with every kind of encoding the default run caches (MiniLM and me5-small whole, MiniLM's
# windows under BM25 -> MaxP); then a harmless function added to every module of src/posir/models/ and to the
# cache's; then every encode job forced again. Prints the texts the forced jobs encoded (0 expected) and whether
# every table came out byte for byte as before.
#
#   bash perf/upgrade_keeps_vectors.sh [work dir]      # about 4 minutes on 2 cores
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d)}
checkout="$work/checkout"
rm -rf "$checkout" && mkdir -p "$checkout"
# the working tree as it is (committed or not), without the environment and any results
git -C "$repo" ls-files -z --cached --others --exclude-standard | (cd "$repo" && xargs -0 cp --parents -t "$checkout")
cd "$checkout"
export PYTHONPATH="$checkout/src" POSIR_MIRROR="${POSIR_MIRROR:-$repo/../shared/data}"
cat >"$work/models.yaml" <<'EOF'
evaluation:
  - benchmark: squad-long
    models: [minilm-l6, me5-small, bm25, bm25.minilm-maxp]
    settings: [eng-eng]
EOF
configs=(--configfile tests/configs/reports_off.yaml tests/configs/faults_run.yaml "$work/models.yaml")
snakemake=("$repo/.venv/bin/python" -m snakemake --cores "${CORES:-2}")

"${snakemake[@]}" "${configs[@]}" >"$work/first.log" 2>&1
rm -rf "$work/tables.before" && cp -r results/tables "$work/tables.before"

# the upgrade: code that moves no vector, in every module the old identity hashed and every cache module
modules=$(find src/posir/models -name '*.py'; ls src/posir/embedding_cache.py src/posir/encoding.py src/posir/cache_*.py)
for module in $modules; do
	printf '\n\ndef _an_upgrade_that_changes_no_vector() -> None:\n    """perf/upgrade_keeps_vectors.sh"""\n' >>"$module"
done
echo "changed $(echo "$modules" | wc -l) modules"

# every job that encodes (the rerank job encodes MaxP's windows) and the conversion of me5-small's weights
forced_rules=(convert_model encode_texts encode_token_vectors encode_sparse_vectors rerank)
"${snakemake[@]}" "${configs[@]}" --forcerun "${forced_rules[@]}" >"$work/second.log" 2>&1
forced=$(grep -cE "^(local)?rule (convert_model|encode_|rerank)" "$work/second.log" || true)
logs=$(find results/logs -name '*.log' -newer "$work/first.log")
encoded=$(cat $logs | sed -n -e 's/.*from the embedding cache, \([0-9]*\) encoded.*/\1/p' \
	-e "s/.*'encoded': \([0-9]*\).*/\1/p" | awk '{s += $1} END {print s + 0}')
echo "forced jobs that convert or encode: $forced; texts they encoded: $encoded"
if diff -r "$work/tables.before" results/tables >"$work/tables.diff"; then
	echo "tables: byte-identical ($(find results/tables -type f | wc -l) files)"
else
	echo "tables differ: $work/tables.diff"
	exit 1
fi
