#!/usr/bin/env bash
# The default run on one NVIDIA GPU, measured: wall time, encode throughput per model, GPU utilisation,
# and (with a CPU run's results) the largest per-query nDCG@10 difference to it.
#   bash perf/gpu_run.sh [WORKDIR [CPU_RESULTS_DIR]]
# Not part of CI (no GPU there). Needs nvidia-smi and the CUDA build of torch==2.13.0. On a GPU machine without
# the workflow, encode there with `posir gpu-encode` instead (src/posir/tools/gpu_encode.py).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
workdir=${1:-$repo/results-gpu}
cpu_results=${2:-}
command -v nvidia-smi >/dev/null || { echo "perf/gpu_run.sh: nvidia-smi not found: this measures a GPU run" >&2; exit 2; }
mkdir -p "$workdir" && cp "$repo/config.yaml" "$workdir/config.yaml"
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader,nounits -l 1 \
    > "$workdir/gpu-utilisation.csv" &
sampler=$!
trap 'kill $sampler 2>/dev/null || true' EXIT
start=$(date +%s)
snakemake --snakefile "$repo/Snakefile" --directory "$workdir" --configfile "$repo/configs/gpu.yaml" \
    --cores "$(nproc)" --resources gpu=1 2>&1 | tee "$workdir/run.log"
wall=$(( $(date +%s) - start ))
cd "$repo" && python -m perf.gpu_report run "$workdir" --wall-s "$wall" ${cpu_results:+--cpu-results "$cpu_results"}
