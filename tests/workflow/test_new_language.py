"""Adding a language whose files follow XQuAD's format is a config change only.

Vietnamese ('vie', XQuAD's ``xquad.vi.json``) is named nowhere in the code:
this test checks that, then runs the workflow on a config that adds it.
"""

from __future__ import annotations

import re

import pandas as pd
import yaml

from tests._configs import without_reports
from tests._snakemake import planned_jobs, snakemake
from tests.conftest import REPO

LANGUAGE = "vie"


def test_the_code_never_names_the_language():
    for folder in ("src", "rules", "scripts", "schemas"):
        for path in (REPO / folder).rglob("*"):
            if path.is_file() and path.suffix in {".py", ".smk", ".yaml", ".json"}:
                assert not re.search(rf"\b({LANGUAGE}|vi)\b", path.read_text(encoding="utf-8")), path
    assert not re.search(rf"\b{LANGUAGE}\b", (REPO / "Snakefile").read_text())


def test_a_config_entry_adds_the_language_to_every_setting_kind(tmp_path, mirror):
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config["sources"] = {
        k: v for k, v in config["sources"].items() if k in ("squad_dev_v1_1", "xquad_eng", "xquad_deu")
    }
    config["sources"][f"xquad_{LANGUAGE}"] = {
        "url": "https://raw.githubusercontent.com/google-deepmind/xquad/master/xquad.vi.json",
        "sha256": "f619a1eb11fb42d3ab0834259e488a65f585447ef6154437bfb7199d85161a04",
        "mirror_path": "xquad/xquad.vi.json",
    }
    sources = {"eng": "xquad_eng", "deu": "xquad_deu", LANGUAGE: f"xquad_{LANGUAGE}"}
    config["benchmarks"] = {
        "squad-long": config["benchmarks"]["squad-long"],
        "xquad-long": {**config["benchmarks"]["xquad-long"], "languages": ["eng", LANGUAGE], "sources": sources},
        "xquad-parallel": {
            **config["benchmarks"]["xquad-parallel"],
            "languages": ["eng", "deu", LANGUAGE],
            "sources": sources,
        },
    }
    config["evaluation"] = [
        {"benchmark": "xquad-long", "models": ["bm25"], "settings": [f"{LANGUAGE}-eng"]},
        {
            "benchmark": "xquad-parallel",
            "models": ["bm25"],
            "settings": [f"{LANGUAGE}-{LANGUAGE}", f"{LANGUAGE}-mul", "deu-mul"],
        },
    ]
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(without_reports(config)))
    dry = snakemake(tmp_path, "-n", "--cores", "2", mirror=mirror)
    assert dry.returncode == 0, dry.stderr[-3000:]
    built = {
        w.get("benchmark", "") + "-" + w.get("language", "")
        for rule, w in planned_jobs(dry.stdout)
        if rule.startswith("build_") and "language" in w
    }
    assert {f"xquad-long-{LANGUAGE}", f"xquad-parallel-{LANGUAGE}"} <= built

    targets = [
        "results/tables/xquad-parallel/main.csv",
        "results/tables/xquad-parallel/language_bias.csv",
        "results/tables/xquad-long/main.csv",
    ]
    done = snakemake(tmp_path, "--cores", "2", *targets, mirror=mirror)
    assert done.returncode == 0, done.stderr[-3000:]
    table = pd.read_csv(tmp_path / "results/tables/xquad-parallel/main.csv")
    assert set(table["setting"]) == {f"{LANGUAGE}-{LANGUAGE}", f"{LANGUAGE}-mul", "deu-mul"}
    assert (table["n_queries"] == 1190).all()
    shares = pd.read_csv(tmp_path / "results/tables/xquad-parallel/language_bias.csv")
    assert set(shares["document_language"]) <= {"eng", "deu", LANGUAGE}
    for _, group in shares.groupby("query_language"):
        assert abs(group["share"].sum() - 1.0) < 1e-9
    assert (tmp_path / f"results/benchmarks/xquad-parallel-{LANGUAGE}/corpus.jsonl").stat().st_size > 0
