"""Step: who gets seen on one benchmark: every run's exposure by group of each attribute (posir.metrics.exposure).

Groups come from the documents of each setting's corpus: a column of ``documents.tsv`` (``length_bucket``, or a
benchmark's own), the ``language`` of the directory a document comes from, or its ``provenance``. A one-vs-many
corpus prefixes its ids with their language, as its runs do. Per run and query: each group's exposure share in the
top 10 and 100, AWRF@10 per attribute, expected exposure; PEER per attribute where a query has relevant documents in
several of its groups. Means over queries go to ``exposure`` and ``peer`` tables, the configured model pairs'
differences with paired bootstrap intervals to ``exposure_pairs``, exposure against corpus share to a figure.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from posir import benchmark as fmt
from posir.jobs.evaluation import ExposureCorpus, ExposureJob
from posir.metrics.bootstrap import interval
from posir.metrics.exposure import awrf, expected_exposure, exposure_shares, peer
from posir.metrics.language_bias import LANGUAGE_SEPARATOR
from posir.metrics.params import BootstrapParams
from posir.progress import Progress
from posir.results import (
    ATTRIBUTE,
    AWRF_DEPTH,
    EXPOSURE_COLUMNS,
    EXPOSURE_DEPTHS,
    EXPOSURE_MEASURES,
    EXPOSURE_PAIR_COLUMNS,
    GROUP,
    MODEL,
    PEER_COLUMNS,
    SETTING,
)
from posir.runs import iter_rankings

#: an attribute with more groups than this is a number, not a group (a length in tokens): bucket it first
MAX_GROUPS = 50


@dataclass(frozen=True)
class Corpus:
    """One setting's documents: each attribute's group per document id, and the queries' relevant documents."""

    setting: str
    groups: dict[str, dict[str, str]]  # attribute -> doc id -> group
    qrels: dict[str, dict[str, int]]

    def shares(self, attribute: str) -> dict[str, float]:
        counts = Counter(self.groups[attribute].values())
        return {group: n / sum(counts.values()) for group, n in sorted(counts.items())}

    def relevant_shares(self, attribute: str) -> dict[str, float]:
        groups = self.groups[attribute]
        counts = Counter(groups[doc] for docs in self.qrels.values() for doc, grade in docs.items() if grade > 0)
        total = sum(counts.values())
        return {group: n / total for group, n in sorted(counts.items())} if total else {}

    def compared(self, attribute: str) -> bool:
        """A corpus of one group has nothing to compare (a monolingual corpus by language)."""
        return len(set(self.groups[attribute].values())) > 1

    def peer_applies(self, attribute: str) -> bool:
        """PEER compares groups of equally relevant documents: some query has relevant documents in several."""
        groups = self.groups[attribute]
        return any(len({groups.get(d) for d, g in docs.items() if g > 0}) > 1 for docs in self.qrels.values())


def read_corpus(
    corpus: ExposureCorpus, documents: Sequence[Path], cards: Sequence[Path], qrels_path: Path, attributes: list[str]
) -> Corpus:
    """The groups of a setting's documents (``documents``/``cards``: one per corpus part, in its languages' order)."""
    from posir.metrics.language_bias import expand_qrels

    groups: dict[str, dict[str, str]] = {attribute: {} for attribute in attributes}
    for language, table_path, card_path in zip(corpus.languages, documents, cards, strict=True):
        table = pd.read_csv(table_path, sep="\t", dtype=str, keep_default_na=False)
        card = json.loads(Path(card_path).read_text())
        prefix = f"{language}{LANGUAGE_SEPARATOR}" if corpus.one_vs_many else ""
        ids = (prefix + table["doc_id"]).tolist()
        for attribute in attributes:
            if attribute == "language":
                values = [language] * len(ids)
            elif attribute == "provenance":
                values = [str(card.get("provenance") or card.get("builder", "unknown"))] * len(ids)
            elif attribute in table.columns:
                values = table[attribute].tolist()
            else:
                raise ValueError(
                    f"{table_path}: no column '{attribute}' (exposure attribute of setting {corpus.setting}); "
                    f"its columns are {list(table.columns)}: name one of them, language or provenance under exposure"
                )
            groups[attribute].update(zip(ids, values))
    qrels = fmt.read_qrels(qrels_path)
    if corpus.one_vs_many:
        qrels = expand_qrels(qrels, corpus.languages)
    return Corpus(corpus.setting, groups, qrels)


def awrf_target(job: ExposureJob, corpus: Corpus, attribute: str) -> dict[str, float]:
    """AWRF's target for an attribute: the configured one, which must give every group of the corpus a share, or
    each group's share of the corpus."""
    groups = corpus.shares(attribute)
    if len(groups) > MAX_GROUPS:
        raise ValueError(
            f"exposure.benchmarks.{job.wildcards.get('benchmark')}.attributes: '{attribute}' has {len(groups)} groups "
            f"in the corpus of {corpus.setting}; it looks like a number (a length): group it first, e.g. "
            "length_bucket"
        )
    given = job.targets.get(attribute)
    if not given:
        return groups
    if set(given) != set(groups):
        raise ValueError(
            f"exposure.benchmarks.{job.wildcards.get('benchmark')}.targets.{attribute}: gives {sorted(given)}, but "
            f"the corpus of {corpus.setting} has the groups {sorted(groups)}; give each a share (0 allowed)"
        )
    return {group: given[group] for group in groups}


def per_query_measures(run: Path, corpus: Corpus, job: ExposureJob) -> tuple[pd.DataFrame, int]:
    """One row per judged query of ``run``: EE, and per attribute AWRF@10, each group's shares and PEER where it
    applies; and how many of its queries had no judgements (no target exposure: left out)."""
    attributes = [a for a in job.attributes if corpus.compared(a)]
    targets = {a: awrf_target(job, corpus, a) for a in attributes}
    peer_attributes = [a for a in attributes if corpus.peer_applies(a)]
    weights = dict(job.peer_weights)
    rows, unjudged = [], 0
    for qid, ranking in iter_rankings(run):
        qrels = corpus.qrels.get(qid)
        if not qrels:
            unjudged += 1
            continue
        ee = expected_exposure(ranking, qrels, job.patience, job.browsing, job.utility)
        row: dict[str, float | str] = {"qid": qid, "ee_l": ee.ee_l, "ee_d": ee.ee_d, "ee_r": ee.ee_r}
        for attribute in attributes:
            groups = corpus.groups[attribute]
            row[f"{attribute}|awrf@{AWRF_DEPTH}"] = awrf(ranking, groups, targets[attribute], AWRF_DEPTH)
            for depth in EXPOSURE_DEPTHS:
                shares = exposure_shares(ranking, groups, depth)
                for group in corpus.shares(attribute):
                    row[f"{attribute}|{group}|exposure_share@{depth}"] = shares.get(group, 0.0)
            if attribute in peer_attributes:
                result = peer(ranking, qrels, groups, job.peer_cutoff, weights)
                row[f"{attribute}|peer"] = result.value
                for grade in weights:
                    row[f"{attribute}|peer_p_grade_{grade}"] = result.by_grade.get(grade, float("nan"))
        rows.append(row)
    return pd.DataFrame(rows).set_index("qid").sort_index(), unjudged


def exposure_rows(model: str, corpus: Corpus, frame: pd.DataFrame, attributes: Sequence[str]) -> list[dict]:
    rows = []
    for attribute in attributes:
        if not corpus.compared(attribute):
            continue
        relevant = corpus.relevant_shares(attribute)
        for group, share in corpus.shares(attribute).items():
            rows.append(
                {
                    MODEL: model,
                    SETTING: corpus.setting,
                    ATTRIBUTE: attribute,
                    GROUP: group,
                    "n_queries": len(frame),
                    "corpus_share": share,
                    "relevant_share": relevant.get(group, 0.0),
                    **{
                        f"exposure_share@{d}": frame[f"{attribute}|{group}|exposure_share@{d}"].mean()
                        for d in EXPOSURE_DEPTHS
                    },
                    f"awrf@{AWRF_DEPTH}": frame[f"{attribute}|awrf@{AWRF_DEPTH}"].mean(),
                    **{measure: frame[measure].mean() for measure in ("ee_l", "ee_d", "ee_r")},
                }
            )
    return rows


def peer_rows(model: str, corpus: Corpus, frame: pd.DataFrame, job: ExposureJob) -> list[dict]:
    rows = []
    for attribute in job.attributes:
        column = f"{attribute}|peer"
        if column not in frame:
            continue
        finite = frame[column].notna()
        rows.append(
            {
                MODEL: model,
                SETTING: corpus.setting,
                ATTRIBUTE: attribute,
                "cutoff": job.peer_cutoff,
                "n_queries": int(finite.sum()),
                # the authors' mean is NaN once one query's test is 0/0 (one value, equal to the filler): those
                # queries are counted here and left out of the mean
                "n_undefined": int((~finite).sum()),
                "peer": frame.loc[finite, column].mean(),
                **{
                    f"p_grade_{grade}": frame.loc[finite, f"{attribute}|peer_p_grade_{grade}"].mean()
                    for grade, _ in job.peer_weights
                },
            }
        )
    return rows


def paired_difference(a: np.ndarray, b: np.ndarray, params: BootstrapParams) -> tuple[float, float, float]:
    """mean(a - b) over paired queries and its bootstrap interval (queries resampled with replacement)."""
    differences = a - b
    point = float(differences.mean())
    rng = np.random.default_rng(params.seed)
    picks = rng.integers(0, len(differences), size=(params.resamples, len(differences)))
    replicates = differences[picks].mean(axis=1)
    low, high, _ = interval(replicates, np.asarray(point), params, bounds=(-np.inf, np.inf))
    return point, float(low), float(high)


def pair_rows(
    pair: tuple[str, str], corpus: Corpus, frames: Mapping[str, pd.DataFrame], job: ExposureJob
) -> list[dict]:
    first, second = pair
    if first not in frames or second not in frames:
        return []
    a, b = frames[first].align(frames[second], join="inner", axis=0)
    rows = []
    for column in a.columns:
        # columns: "ee_l" (a run's), "<attribute>|awrf@10" (an attribute's), "<attribute>|<group>|exposure_share@10"
        parts = column.split("|")
        measure = parts[-1]
        if measure.startswith("peer") or measure == "ee_d":
            continue  # PEER is per attribute (peer.csv); EE-D is the same for every full deterministic ranking
        attribute = parts[0] if len(parts) > 1 else ""
        group = parts[1] if len(parts) > 2 else ""
        paired = a[column].notna() & b[column].notna()
        point, low, high = paired_difference(
            a.loc[paired, column].to_numpy(float), b.loc[paired, column].to_numpy(float), job.bootstrap
        )
        rows.append(
            {
                "model_a": first,
                "model_b": second,
                SETTING: corpus.setting,
                ATTRIBUTE: attribute,
                GROUP: group,
                "measure": measure,
                "n_queries": int(paired.sum()),
                "difference": point,
                "ci_low": low,
                "ci_high": high,
            }
        )
    return rows


def write_exposure(job: ExposureJob) -> None:
    """Every run's exposure, PEER and the configured pairs' differences, as tables and a figure."""
    from posir.figures import exposure_figure
    from posir.tables.render import exposure_markdown

    documents, cards, qrels = job.paths("documents"), job.paths("cards"), job.paths("qrels")
    corpora: dict[str, Corpus] = {}
    start = 0
    for corpus, qrels_path in zip(job.corpora, qrels, strict=True):
        parts = slice(start, start + len(corpus.languages))
        start += len(corpus.languages)
        corpora[corpus.setting] = read_corpus(corpus, documents[parts], cards[parts], qrels_path, job.attributes)
    exposure, peers, pairs, left_out = [], [], [], []
    frames: dict[str, dict[str, pd.DataFrame]] = {}
    runs = Progress("exposure", len(job.runs), unit="runs", every_s=0.0)
    for (model, setting), run in zip(job.runs, job.paths("runs"), strict=True):
        if not any(corpora[setting].compared(a) for a in job.attributes):
            runs.advance(1)
            continue  # e.g. a monolingual setting by language: one group, nothing to compare
        frame, unjudged = per_query_measures(run, corpora[setting], job)
        if unjudged:
            left_out.append(f"{model} on {setting}: {unjudged} queries without judgements (no target exposure)")
        runs.advance(1)
        frames.setdefault(setting, {})[model] = frame
        exposure += exposure_rows(model, corpora[setting], frame, job.attributes)
        peers += peer_rows(model, corpora[setting], frame, job)
    for setting, by_model in frames.items():
        for pair in job.compare:
            pairs += pair_rows(pair, corpora[setting], by_model, job)
    tables = {
        "exposure": pd.DataFrame(exposure, columns=list(EXPOSURE_COLUMNS)),
        "peer": pd.DataFrame(peers, columns=[*PEER_COLUMNS, *(f"p_grade_{g}" for g, _ in job.peer_weights)]),
        "pairs": pd.DataFrame(pairs, columns=list(EXPOSURE_PAIR_COLUMNS)),
    }
    for name, table in tables.items():
        table.to_csv(job.path(f"{name}_csv", "output"), index=False)
        markdown = exposure_markdown(name, table, left_out)
        job.path(f"{name}_markdown", "output").write_text(markdown, encoding="utf-8")
    exposure_figure(tables["exposure"], job.path("figure", "output"))
    print(
        f"exposure: {len(job.runs)} run(s), {len(tables['exposure'])} group rows, {len(tables['peer'])} PEER rows, "
        f"{len(tables['pairs'])} paired differences ({', '.join(EXPOSURE_MEASURES)})"
    )
