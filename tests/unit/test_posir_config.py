"""tests/fixtures/posir_config.py: PosIR's 310 datasets and 18 settings in today's config shapes."""

from __future__ import annotations

import yaml

from posir.config import Evaluation, Setting, load_config
from tests.conftest import REPO
from tests.fixtures.posir_config import CROSS_LINGUAL, DEFAULT_MODELS, merged, posir_config
from tests.fixtures.posir_sources import posir_domains


def test_posir_has_310_datasets_and_18_settings():
    config = posir_config("/posir")
    assert len(posir_domains()) == 31
    assert len(config["benchmarks"]) == 310 + 31 * 8
    settings = {block["settings"][0] for block in config["evaluation"]}
    assert len(settings) == 18 and "cmn-cmn" in settings and "cmn-eng" not in settings
    assert {f"{lang}-eng" for lang in CROSS_LINGUAL} < settings
    assert all(block["models"] == list(DEFAULT_MODELS) for block in config["evaluation"])


def test_cross_lingual_entries_import_the_x_folder_and_search_the_english_corpus():
    config = posir_config("/posir", domains=["game"])
    deu_eng = config["benchmarks"]["posir.game.deu-eng"]
    assert deu_eng["corpus_from"] == "posir.game.eng" and deu_eng["language"] == "deu"
    assert deu_eng["posir_import"] == {"path": "/posir", "subset": "deu-Latn/game"}
    assert config["benchmarks"]["posir.game.cmn"]["posir_import"]["subset"] == "cmn-Hans/game"
    assert {"benchmark": "posir.game.deu-eng", "models": list(DEFAULT_MODELS), "settings": ["deu-eng"]} in config[
        "evaluation"
    ]


def test_merged_over_config_yaml_passes_the_config_checks():
    overlay = posir_config("/posir", domains=["game", "fineweb"])
    raw = merged(yaml.safe_load((REPO / "config.yaml").read_text()), overlay)
    assert raw["paper_tables"] is None  # the overlay clears config.yaml's paper tables ...
    config = load_config(raw)  # ... and the typed config (cross references checked inside) holds none
    listed = list(config.evaluations)
    assert len(listed) == 2 * 18 * len(DEFAULT_MODELS)
    assert config.paper_tables == {} and config.published  # PosIR's published table stays
    # cmn is Chinese: the multilingual models that declare zho are not flagged
    cmn = Evaluation("posir.game.cmn", "use-m3", Setting("cmn", "cmn"))
    assert config.languages_outside_model(cmn) == []
