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
