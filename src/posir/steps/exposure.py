"""Step: who gets seen on one benchmark: every run's exposure by group of each attribute (posir.metrics.exposure).

Reads each setting's corpus groups and every run, computes the per-query values of the job's measures, and writes
the ``exposure``, ``peer`` and ``exposure_pairs`` tables (posir.tables.exposure) and the exposure figure.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from posir import benchmark as fmt
from posir.jobs.evaluation import ExposureCorpus, ExposureJob
from posir.metrics.columns import DOC_ID
from posir.metrics.exposure import (
    LANGUAGE_ATTRIBUTE,
    PROVENANCE_ATTRIBUTE,
    DocumentGroups,
    awrf_target,
    per_query_values,
)
from posir.metrics.language_bias import LANGUAGE_SEPARATOR, expand_qrels
from posir.metrics.measure import EXPOSURE_TABLE, GROUP_SCOPE, PEER_TABLE
from posir.progress import Progress
from posir.results.io import read_text_table, write_table, write_text
from posir.results.runs import iter_rankings
from posir.tables.exposure import exposure_rows, exposure_tables, pair_rows, peer_rows


def read_groups(
    corpus: ExposureCorpus, documents: Sequence[Path], cards: Sequence[Path], qrels_path: Path, attributes: list[str]
) -> DocumentGroups:
    """The groups of a setting's documents (``documents``/``cards``: one per corpus part, in its languages' order)."""
    groups: dict[str, dict[str, str]] = {attribute: {} for attribute in attributes}
    for language, table_path, card_path in zip(corpus.languages, documents, cards, strict=True):
        table = read_text_table(table_path)
        card = json.loads(Path(card_path).read_text())
        prefix = f"{language}{LANGUAGE_SEPARATOR}" if corpus.one_vs_many else ""
        ids = (prefix + table[DOC_ID]).tolist()
        for attribute in attributes:
            if attribute == LANGUAGE_ATTRIBUTE:
                values = [language] * len(ids)
            elif attribute == PROVENANCE_ATTRIBUTE:
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
    return DocumentGroups(corpus.setting, groups, qrels)


def write_exposure(job: ExposureJob) -> None:
    """Every run's exposure, PEER and the configured pairs' differences, as tables and a figure."""
    from posir.figures import exposure_figure
    from posir.tables.exposure import exposure_markdown

    documents, cards, qrels = job.paths("documents"), job.paths("cards"), job.paths("qrels")
    corpora: dict[str, DocumentGroups] = {}
    start = 0
    for corpus, qrels_path in zip(job.corpora, qrels, strict=True):
        parts = slice(start, start + len(corpus.languages))
        start += len(corpus.languages)
        corpora[corpus.setting] = read_groups(corpus, documents[parts], cards[parts], qrels_path, job.attributes)
    where = f"exposure.benchmarks.{job.wildcards.get('benchmark')}"
    measures = job.group_measures()
    exposure, peers, pairs, left_out = [], [], [], []
    frames: dict[str, dict[str, pd.DataFrame]] = {}
    runs = Progress("exposure", len(job.runs), unit="runs", every_s=0.0)
    for (model, setting), run in zip(job.runs, job.paths("runs"), strict=True):
        corpus = corpora[setting]
        compared = [a for a in job.attributes if corpus.compared(a)]
        if not compared:
            runs.advance(1)
            continue  # e.g. a monolingual setting by language: one group, nothing to compare
        targets = {a: awrf_target(corpus, a, job.targets.get(a), where) for a in compared}
        frame, unjudged = per_query_values(iter_rankings(run), corpus, measures, job.attributes, targets)
        if unjudged:
            left_out.append(f"{model} on {setting}: {unjudged} queries without judgements (no target exposure)")
        runs.advance(1)
        frames.setdefault(setting, {})[model] = frame
        exposure += exposure_rows(model, corpus, frame, measures, job.attributes)
        peers += peer_rows(model, corpus, frame, measures, job.attributes)
    for setting, by_model in frames.items():
        for pair in job.compare:
            pairs += pair_rows(pair, setting, by_model, measures, job.bootstrap)
    tables = exposure_tables(exposure, peers, pairs, measures)
    for name, table in tables.items():
        write_table(table, job.path(f"{name}_csv", "output"))
        write_text(exposure_markdown(name, table, left_out, measures), job.path(f"{name}_markdown", "output"))
    shares = next(m for m in measures if m.scope == GROUP_SCOPE)  # the config asks for one (ExposureParams)
    exposure_figure(tables[EXPOSURE_TABLE], shares, job.path("figure", "output"))
    print(
        f"exposure: {len(job.runs)} run(s), {len(tables[EXPOSURE_TABLE])} group rows, "
        f"{len(tables[PEER_TABLE])} PEER rows, "
        f"{len(tables['pairs'])} paired differences ({', '.join(m.name for m in measures)})"
    )
