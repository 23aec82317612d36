#!/usr/bin/env bash
# Times the whole default run (make run) in a checkout and samples the machine while it runs.
#
#   bash perf/run_whole.sh /tmp/run1      # a fresh clone, set up with `make setup` first
#
# Writes beside the checkout: <dir>.time (GNU time -v of make run), <dir>.mem (every 10 s:
# "<epoch> <used MB> <load 1 min>") and <dir>.driver (every 60 s: "<epoch> <snakemake driver CPU time>").
# Then: python -m perf.run_profile <dir> --wall-s <elapsed> --memory-log <dir>.mem
#       python perf/check_runs_pytrec.py <dir>/results
#       python -m perf.compare_runs <dir>/results <an earlier whole run>/results   (numbers unchanged?)
set -euo pipefail
run_dir=$(cd "$1" && pwd)
cores=${CORES:-2}

sample() {
	while sleep 10; do
		echo "$(date +%s) $(free -m | awk '/^Mem:/ {print $3}') $(cut -d' ' -f1 /proc/loadavg)" >>"$run_dir.mem"
	done
}
sample_driver() {
	while sleep 60; do
		pid=$(pgrep -f "bin/snakemake --cores" | head -1) || continue
		echo "$(date +%s) $(ps -o time= -p "$pid" | tr -d ' ')" >>"$run_dir.driver"
	done
}
: >"$run_dir.mem"
: >"$run_dir.driver"
sample &
memory_sampler=$!
sample_driver &
driver_sampler=$!
trap 'kill $memory_sampler $driver_sampler 2>/dev/null || true' EXIT

cd "$run_dir"
echo "make run in $run_dir from $(git rev-parse --short HEAD), $cores cores, started $(date -u +%FT%TZ)"
/usr/bin/time -v -o "$run_dir.time" make run CORES="$cores"
echo "finished $(date -u +%FT%TZ)"
grep -E "Elapsed|Maximum resident|User time|System time|Percent of CPU" "$run_dir.time"
