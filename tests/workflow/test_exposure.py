"""Who gets seen, in a real run: the exposure tables and figure of the build of tests/configs/faults_run.yaml (one
SQuAD article; BM25, MiniLM, BM25 -> MiniLM MaxP; groups by length bucket), shared with tests/faults/runs."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from posir.metrics.exposure import ExposureParams
from posir.results.schemas import EXPOSURE_PAIR_COLUMNS, exposure_columns
from tests.workflow.conftest import shared_build

EXPOSURE_COLUMNS = exposure_columns(ExposureParams().group_measures())

BENCHMARK = "squad-long"


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory, mirror: Path) -> Path:
    build = shared_build(tmp_path_factory, mirror, "faults-run", "reports_off", "faults_run")
    return build.workdir / "results"


def test_each_runs_groups_share_its_exposure_and_the_corpus(tables: Path) -> None:
    exposure = pd.read_csv(tables / "tables" / BENCHMARK / "exposure.csv")
    assert list(exposure.columns) == list(EXPOSURE_COLUMNS)
    assert set(exposure["model"]) == {"minilm-l6", "bm25", "bm25.minilm-maxp"}
    documents = pd.read_csv(tables / "benchmarks" / BENCHMARK / "documents.tsv", sep="\t")
    corpus = documents["length_bucket"].value_counts(normalize=True)
    for _, run in exposure.groupby("model"):
        assert run["exposure_share@10"].sum() == pytest.approx(1.0)  # every document has a bucket
        assert run.set_index("group")["corpus_share"].to_dict() == pytest.approx(corpus.to_dict())
        assert run["relevant_share"].sum() == pytest.approx(1.0)
        assert run["awrf@10"].nunique() == 1 and 1 - math.log(2) <= run["awrf@10"].iloc[0] <= 1
        assert (run["n_queries"] == 810).all() and run["ee_r"].between(0, 1).all()
    # one deterministic ranking of the whole corpus (6 documents): each document's exposure is its rank's
    dense = exposure[exposure["model"] == "minilm-l6"]
    assert dense["ee_d"].to_numpy() == pytest.approx([sum(0.25**i for i in range(6))] * len(dense))
    assert (exposure["ee_d"] <= 4 / 3).all()
    assert (tables / "figures" / BENCHMARK / "exposure.png").stat().st_size > 10_000


def test_peer_needs_several_groups_of_relevant_documents_and_pairs_have_intervals(tables: Path) -> None:
    folder = tables / "tables" / BENCHMARK
    assert pd.read_csv(folder / "peer.csv").empty  # one relevant document per query: nothing for PEER to compare
    assert (folder / "peer.md").read_text().startswith("No rows: no query has relevant documents in several")
    pairs = pd.read_csv(folder / "exposure_pairs.csv", keep_default_na=False)
    assert list(pairs.columns) == list(EXPOSURE_PAIR_COLUMNS)
    assert set(pairs[["model_a", "model_b"]].itertuples(index=False, name=None)) == {("minilm-l6", "bm25.minilm-maxp")}
    assert set(pairs["measure"]) == {"exposure_share@10", "exposure_share@100", "awrf@10", "ee_l", "ee_r"}
    numeric = pairs[["difference", "ci_low", "ci_high"]].astype(float)
    assert (
        (numeric["ci_low"] <= numeric["difference"] + 1e-12) & (numeric["difference"] <= numeric["ci_high"] + 1e-12)
    ).all()
    exposure = pd.read_csv(folder / "exposure.csv").set_index(["model", "group"])
    ee = pairs[pairs["measure"] == "ee_l"].iloc[0]
    expected = exposure.loc["minilm-l6", "ee_l"].iloc[0] - exposure.loc["bm25.minilm-maxp", "ee_l"].iloc[0]
    assert float(ee["difference"]) == pytest.approx(expected)
