"""A rule's job imports what it uses: its own job type's declarations, not the plan, the whole config or a model
library it may not need (perf/script_startup.py measures what that saves per job).

Before: every script imported ``posir.plan.jobs``, hence ``posir.plan``, the whole config and pandas (about
0.45 CPU-seconds of every job's start), and the rerank step imported the LLM client's openai for every scorer.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys

from tests.conftest import REPO

#: Never imported by a script before its work: the plan and the config are the driver's; a model library is
#: imported by the backend that loads a model, only when a text misses the embedding cache.
NEVER_AT_START = ("posir.plan", "posir.config", "torch", "sentence_transformers", "transformers")
#: The most numerous jobs of a run that build no table and ask no LLM: their start needs neither pandas nor openai.
LEAN = ("encode_texts", "rerank", "fetch_source")


def script_imports(rule: str) -> str:
    tree = ast.parse((REPO / "scripts" / f"{rule}.py").read_text(encoding="utf-8"))
    return "\n".join(ast.unparse(node) for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom))


def loaded_after(imports: str, modules: tuple[str, ...]) -> list[str]:
    """Which of ``modules`` a fresh Python has loaded after running ``imports``."""
    probe = f"{imports}\nimport json, sys\nprint(json.dumps([m for m in {list(modules)!r} if m in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def test_no_script_imports_the_plan_the_config_or_a_model_library_before_its_work():
    rules = sorted(p.stem for p in (REPO / "scripts").glob("*.py"))
    assert loaded_after("\n".join(script_imports(r) for r in rules), NEVER_AT_START) == []


def test_encode_rerank_and_fetch_jobs_start_without_pandas_or_the_llm_client():
    assert loaded_after("\n".join(script_imports(r) for r in LEAN), ("pandas", "openai")) == []


def test_a_runs_scoring_job_imports_neither_scipys_statistics_nor_matplotlib(tmp_path):
    """A retrieve or score_run job (one per run, the most numerous after encoding) scores, bins and bootstraps; what
    needs scipy.stats or matplotlib (the summary's trend flags, the trend tests, the position figure) is its
    benchmark's analysis job. Before, every run's job imported both: about a CPU-second of its 1.7-second start."""
    positions = "qid\tdoc_id\tdoc_token_length\tlength_bucket\trelative_position\tposition_bin\t"
    positions += "span_start\tspan_end\tdoc_char_length\n"
    positions += "".join(f"q{i}\td{i}\t100\tQ1\t{i / 10}\t{2 * i}\t{i}\t{i + 5}\t100\n" for i in range(1, 9))
    (tmp_path / "positions.tsv").write_text(positions)
    (tmp_path / "qrels.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\td{i}\t1\n" for i in range(1, 9))
    )
    (tmp_path / "run.trec").write_text("".join(f"q{i} Q0 d{i % 3} 1 1.0 t\n" for i in range(1, 9)))
    files = {name: str(tmp_path / name) for name in ("qrels.tsv", "positions.tsv", "run.trec")}
    outputs = {name: str(tmp_path / f"{name}.tsv") for name in ("per_query", "bins", "bootstrap", "bootstrap_bins")}
    probe = f"""
from posir.jobs.retrieval import ScoreJob
from posir.metrics.params import MetricParams
from posir.steps.evaluation import evaluate_run
inputs = {{"qrels": {files["qrels.tsv"]!r}, "positions": {files["positions.tsv"]!r}, "run": {files["run.trec"]!r}}}
evaluate_run(ScoreJob(metrics=MetricParams(), input=inputs, output={outputs!r}))
import json, sys
print(json.dumps([m for m in ("scipy.stats", "matplotlib") if m in sys.modules]))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, check=True)
    assert json.loads(done.stdout.splitlines()[-1]) == []
    assert all((tmp_path / f"{name}.tsv").stat().st_size > 0 for name in outputs)
