"""Adding a language whose files follow XQuAD's format is a config change only.

Vietnamese ('vie', XQuAD's ``xquad.vi.json``) is named nowhere in the code:
this test checks that, then runs the workflow on a config that adds it.
"""

from __future__ import annotations

import re

import pandas as pd

from tests._snakemake import Build
from tests.conftest import REPO

LANGUAGE = "vie"


def test_the_code_never_names_the_language():
    for folder in ("src", "rules", "scripts", "schemas"):
        for path in (REPO / folder).rglob("*"):
            if path.is_file() and path.suffix in {".py", ".smk", ".yaml", ".json"}:
                assert not re.search(rf"\b({LANGUAGE}|vi)\b", path.read_text(encoding="utf-8")), path
    assert not re.search(rf"\b{LANGUAGE}\b", (REPO / "Snakefile").read_text())


def test_a_config_entry_adds_the_language_to_every_setting_kind(tmp_path, mirror, shared_caches):
    """tests/configs/new_language.yaml."""
    build = Build.prepare(tmp_path, mirror, ["reports_off", "new_language"], shared_caches)
    built = {
        w.get("benchmark", "") + "-" + w.get("language", "")
        for rule, w in build.planned()
        if rule.startswith("build_") and "language" in w
    }
    assert {f"xquad-long-{LANGUAGE}", f"xquad-parallel-{LANGUAGE}"} <= built

    targets = [
        "results/tables/xquad-parallel/main.csv",
        "results/tables/xquad-parallel/language_bias.csv",
        "results/tables/xquad-long/main.csv",
    ]
    build.run(*targets)
    table = pd.read_csv(tmp_path / "results/tables/xquad-parallel/main.csv")
    assert set(table["setting"]) == {f"{LANGUAGE}-{LANGUAGE}", f"{LANGUAGE}-mul", "deu-mul"}
    assert (table["n_queries"] == 1190).all()
    shares = pd.read_csv(tmp_path / "results/tables/xquad-parallel/language_bias.csv")
    assert set(shares["document_language"]) <= {"eng", "deu", LANGUAGE}
    for _, group in shares.groupby("query_language"):
        assert abs(group["share"].sum() - 1.0) < 1e-9
    assert (tmp_path / f"results/benchmarks/xquad-parallel-{LANGUAGE}/corpus.jsonl").stat().st_size > 0
