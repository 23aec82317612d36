#!/usr/bin/env bash
# The GPU check, in one call to the lent GPU machine (docs/performance.md, "One GPU, measured"): the workflow's own
# encode and retrieve jobs on cuda, run by Snakemake from the bundle `make gpu-bundle` made here, measured against a
# bare SentenceTransformer.encode of the same texts and against the CPU's vectors.
#
#   device run, carry [".gpu-bundle"]:  bash perf/gpu_check.sh            (results under $OUT)
#   here, on the CPU (what a CPU can check: the bundle, the jobs, the report):  DEVICE=cpu bash perf/gpu_check.sh
#
# Writes to $OUT (or ./gpu-check): run.log (Snakemake's), gpu.csv (nvidia-smi every 0.2 s, on cuda), report.json and
# report.md (python -m perf.gpu_check_report).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bundle=${BUNDLE:-$repo/.gpu-bundle}
device=${DEVICE:-cuda}
out=${OUT:-$repo/gpu-check}
work=${WORK:-/tmp/posir-gpu-check}
site=${SITE:-/tmp/posir-gpu-site}
mkdir -p "$out"
[ -d "$bundle/wheels" ] && [ -d "$bundle/minilm-l6" ] || { echo "perf/gpu_check.sh: no bundle at $bundle (make gpu-bundle)" >&2; exit 2; }

# the wheels the machine lacks, Snakemake included, into a folder of their own (nothing is fetched)
if [ "${SKIP_INSTALL:-0}" != 1 ]; then
	python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" \
		"$bundle"/wheels/*.whl
	export PYTHONPATH="$site:$repo/src${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1
# MiniLM's packed weights as a sentence-transformers folder again (perf/gpu_bundle.py, packed_minilm)
model="$work-minilm-l6"
(cd "$repo" && python3 -m perf.gpu_bundle unpack "$bundle/minilm-l6" "$model")

# a fresh working directory holding the benchmark and its source, the source the older, so that nothing is rebuilt
rm -rf "$work" && mkdir -p "$work"
tar -xzf "$bundle/results.tar.gz" -C "$work"
find "$work/results/sources" -type f -exec touch -d '2000-01-01 00:00' {} +
cp "$repo/config.yaml" "$work/config.yaml"
cat >"$work/gpu_check.yaml" <<YAML
models:
  minilm-l6-$device:
    backend: sentence-transformers
    model: $model
    max_seq_length: 256
    long_input: truncate
    batch_size: ${BATCH:-64}
    dtype: float32
    device: $device
    languages: [eng]
evaluation:
  - benchmark: squad-long
    models: [minilm-l6-$device]
    settings: [eng-eng]
YAML

if [ "$device" != cpu ] && command -v nvidia-smi >/dev/null; then
	nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader,nounits -lms 200 \
		>"$out/gpu.csv" &
	sampler=$!
	trap 'kill $sampler 2>/dev/null || true' EXIT
fi
gpu=$([ "$device" = cpu ] && echo 0 || echo 1)
python3 -m snakemake --snakefile "$repo/Snakefile" --directory "$work" --configfile "$work/gpu_check.yaml" \
	--cores "$(nproc)" --resources gpu="$gpu" --rerun-triggers mtime --scheduler greedy \
	"results/runs/squad-long/minilm-l6-$device/eng-eng.trec" 2>&1 | tee "$out/run.log"
cd "$repo" && python3 -m perf.gpu_check_report "$work/results" "minilm-l6-$device" --out "$out" \
	${sampler:+--utilisation "$out/gpu.csv"}
