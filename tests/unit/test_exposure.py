"""Exposure measures by hand (posir.metrics.exposure); tests/reference/test_exposure_reference.py compares them with
their authors' code."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chi2

from posir.metrics.measures.awrf import awrf
from posir.metrics.measures.expected_exposure import expected_exposure, target_exposure
from posir.metrics.measures.exposure_share import exposure_shares
from posir.metrics.measures.peer import peer, positions_kruskal_p


def test_exposure_shares_weigh_ranks_by_ndcgs_discount() -> None:
    groups = {"a": "long", "b": "short", "c": "long", "d": "short"}
    shares = exposure_shares(["a", "b", "c", "d"], groups, depth=3)
    total = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert shares == pytest.approx({"long": (1 + 0.5) / total, "short": (1 / math.log2(3)) / total})
    assert sum(exposure_shares(["a", "b", "x"], groups, depth=3).values()) < 1  # "x" has no group: seen, unshared


@pytest.mark.parametrize("k", [0, 1, 4])
def test_expected_exposure_of_one_relevant_document_at_rank_k(k: int) -> None:
    """RBP, patience 1/2: the relevant document's target is 1, its exposure 2^-k; EE-D sums 4^-i over the ranking."""
    ranking = [f"d{i}" for i in range(10)]
    ee = expected_exposure(ranking, {f"d{k}": 1}, patience=0.5)
    assert ee.ee_r == pytest.approx(0.5**k)
    assert ee.ee_d == pytest.approx(sum(0.25**i for i in range(10)))
    assert ee.ee_l == pytest.approx(ee.ee_d - 2 * 0.5**k + 1)


def test_equally_relevant_documents_share_the_exposure_of_their_positions() -> None:
    target = target_exposure({"a": 1, "b": 1, "c": 2, "z": 0}, patience=0.5)
    assert target == pytest.approx({"c": 1.0, "a": (0.5 + 0.25) / 2, "b": (0.5 + 0.25) / 2})
    unseen = expected_exposure(["x", "y"], {"a": 1}, patience=0.5)  # a relevant document not retrieved
    assert unseen.ee_r == 0 and unseen.ee_l == pytest.approx(1 + 1 + 0.25)


def test_awrf_is_one_at_the_target_and_one_minus_jsd_in_nats_elsewhere() -> None:
    groups = {"a": "x", "b": "y"}
    assert awrf(["a", "b"], groups, {"x": 0.5, "y": 0.5}, depth=10) == pytest.approx(1.0)  # ranks 1, 2 weigh 1
    p, q, m = [1.0, 0.0], [0.5, 0.5], [0.75, 0.25]
    jsd = (
        sum(pi * math.log(pi / mi) for pi, mi in zip(p, m) if pi) + sum(qi * math.log(qi / mi) for qi, mi in zip(q, m))
    ) / 2
    assert awrf(["a", "c"], groups, {"x": 0.5, "y": 0.5}, depth=10) == pytest.approx(1 - jsd)
    assert math.isnan(awrf(["c"], groups, {"x": 0.5, "y": 0.5}, depth=10))
    with pytest.raises(ValueError, match="'z'"):
        awrf(["a"], {"a": "z"}, {"x": 1.0}, depth=10)


def test_peers_test_reads_positions_without_ranking_them_as_its_authors_do() -> None:
    assert positions_kruskal_p([[1, 2], [3, 4]]) == pytest.approx(0.12133525035848208, abs=1e-12)
    assert positions_kruskal_p([[1, 5], [100]]) == pytest.approx(0.15756383141951652, abs=1e-12)  # scipy: 0.2207
    assert positions_kruskal_p([[float("nan")], [float("nan")]]) == 1.0
    assert positions_kruskal_p([[1, 2], []]) == 1.0
    assert math.isnan(positions_kruskal_p([[3.0], [float("nan")]]))  # one value, equal to the filler: 0 / 0


def test_the_chi_square_tail_peer_calls_is_the_one_chi2_sf_gives_to_the_bit() -> None:
    from scipy.special import chdtrc

    generator = np.random.default_rng(5)
    statistics = [0.0, math.inf, math.nan, 1e-12, *generator.random(300) * 40]
    for groups in range(1, 12):
        given = [float(chdtrc(groups, h)) for h in statistics]
        expected = [float(chi2.sf(h, groups)) for h in statistics]
        assert np.array_equal(given, expected, equal_nan=True)


def test_peer_of_one_relevant_copy_per_language_is_the_singleton_p_value() -> None:
    """Every language holds one relevant copy: H = N - 1 whatever the positions (the authors' degenerate case)."""
    groups = {f"{lang}:d": lang for lang in ("ara", "deu", "eng")} | {"eng:x": "eng", "deu:y": "deu"}
    judged = {f"{lang}:d": 1 for lang in ("ara", "deu", "eng")}
    result = peer(["eng:d", "eng:x", "deu:d", "deu:y", "ara:d"], judged, groups, cutoff=10, weights={0: 0.5, 1: 0.5})
    assert result.by_grade[1] == pytest.approx(chi2.sf(2, 2))
    assert result.value == pytest.approx(0.5 * result.by_grade[0] + 0.5 * result.by_grade[1])
    with pytest.raises(ValueError, match="no group"):
        peer(["z"], judged, groups, cutoff=10, weights={1: 1.0})


def test_a_stated_target_gives_every_group_of_the_corpus_a_share_and_a_number_is_no_group() -> None:
    from posir.metrics.exposure import DocumentGroups, awrf_target

    where = "exposure.benchmarks.squad-long"
    corpus = DocumentGroups("eng-eng", {"length_bucket": {"a": "Q1", "b": "Q2", "c": "Q2"}}, {})
    assert awrf_target(corpus, "length_bucket", {}, where) == pytest.approx({"Q1": 1 / 3, "Q2": 2 / 3})
    assert awrf_target(corpus, "length_bucket", {"Q2": 1.0, "Q1": 0.0}, where) == {"Q1": 0, "Q2": 1}
    with pytest.raises(ValueError, match=r"exposure\.benchmarks\.squad-long\.targets\.length_bucket: gives \['Q1'\]"):
        awrf_target(corpus, "length_bucket", {"Q1": 1.0}, where)
    lengths = DocumentGroups("eng-eng", {"token_length": {f"d{i}": str(i) for i in range(60)}}, {})
    with pytest.raises(ValueError, match="'token_length' has 60 groups"):
        awrf_target(lengths, "token_length", {}, where)


def test_queries_without_judgements_are_counted_and_said_beside_the_table(tmp_path) -> None:
    from posir.metrics.exposure import DocumentGroups, awrf_target, per_query_values
    from posir.metrics.params import BootstrapParams
    from posir.plan.jobs import ExposureJob
    from posir.results.runs import iter_rankings
    from posir.tables.exposure import exposure_markdown

    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\nq2 Q0 b 1 3.0 t\nq2 Q0 a 2 1.0 t\n")
    corpus = DocumentGroups("eng-eng", {"length_bucket": {"a": "Q1", "b": "Q4"}}, {"q1": {"b": 1}})
    job = ExposureJob(runs=[], corpora=[], attributes=["length_bucket"], bootstrap=BootstrapParams())
    targets = {"length_bucket": awrf_target(corpus, "length_bucket", None, "exposure")}
    frame, unjudged = per_query_values(iter_rankings(run), corpus, job.group_measures(), job.attributes, targets)
    assert list(frame.index) == ["q1"] and unjudged == 1
    assert frame.loc["q1", ("length_bucket", "Q4", "exposure_share@10")] == pytest.approx(
        (1 / math.log2(3)) / (1 + 1 / math.log2(3))
    )
    markdown = exposure_markdown("exposure", pd.DataFrame(), ["bm25 on eng-eng: 1 queries without judgements"])
    assert "Left out: bm25 on eng-eng: 1 queries without judgements." in markdown
