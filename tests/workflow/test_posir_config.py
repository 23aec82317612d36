"""The config tests/fixtures/posir_config.py writes plans PosIR's settings: X->eng searches the English corpus."""

from __future__ import annotations

import yaml

from tests._snakemake import planned_jobs, snakemake
from tests.conftest import REPO
from tests.fixtures.posir_config import posir_config


def test_posir_config_plans_monolingual_and_cross_lingual_settings(tmp_path, mirror):
    root = tmp_path / "posir"
    for folder in ("eng-Latn", "deu-Latn", "cmn-Hans"):
        (root / folder / "game" / "qrels").mkdir(parents=True)
        for name in ("corpus.parquet", "queries.parquet", "qrels/test.parquet"):
            (root / folder / "game" / name).touch()  # a dry run only needs the inputs to exist
    overlay = posir_config(str(root), domains=["game"], languages=["eng", "deu", "cmn"], models=["bm25", "minilm-l6"])
    (tmp_path / "posir.yaml").write_text(yaml.safe_dump(overlay))
    (tmp_path / "config.yaml").write_text((REPO / "config.yaml").read_text())
    dry = snakemake(tmp_path, "-n", "--cores", "1", "--configfile", str(tmp_path / "posir.yaml"), mirror=mirror)
    assert dry.returncode == 0, (dry.stdout + dry.stderr)[-3000:]
    jobs = planned_jobs(dry.stdout)
    imported = {w["benchmark"] for rule, w in jobs if rule == "import_posir_benchmark"}
    assert imported == {"posir.game.eng", "posir.game.deu", "posir.game.cmn", "posir.game.deu-eng"}
    runs = {(w["benchmark"], w["model"], w["setting"]) for rule, w in jobs if rule == "retrieve"}
    assert runs == {
        (b, m, s)
        for b, s in (
            ("posir.game.eng", "eng-eng"),
            ("posir.game.deu", "deu-deu"),
            ("posir.game.cmn", "cmn-cmn"),
            ("posir.game.deu-eng", "deu-eng"),
        )
        for m in ("bm25", "minilm-l6")
    }
    encoded = {(w["text_set"], w["kind"]) for rule, w in jobs if rule == "encode_texts"}
    # the X->eng entry encodes its queries only: its documents are English's
    assert ("posir.game.deu-eng", "queries") in encoded and ("posir.game.deu-eng", "corpus") not in encoded
    assert {("posir.game.eng", "corpus"), ("posir.game.deu", "corpus"), ("posir.game.cmn", "corpus")} <= encoded
