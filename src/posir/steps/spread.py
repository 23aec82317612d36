"""Steps: a spread family's variant (queries resting on several pieces, their pieces together and apart, all else
held equal; posir.controlled.spread) and the family's distance tables (posir.metrics.distance)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from posir import benchmark as fmt
from posir.jobs.controlled import ControlledJob, DistanceTablesJob, PieceReader
from posir.metrics.columns import MODEL, QID, SETTING
from posir.results.io import read_result_tsv, write_table, write_text
from posir.results.schemas import EVIDENCE_SHARE

logger = logging.getLogger("posir.spread")


def build_spread_variant(job: ControlledJob) -> dict[str, Any]:
    """The job's variant (wildcard ``benchmark``): the family is planned from the source (seeded, so every variant's
    job plans the same family), then this round and cell's corpus, queries, evidence table and card are written."""
    from posir.controlled.family import Source
    from posir.controlled.spread import plan_spread_family
    from posir.text import qwen3_token_counter

    entry, metrics, variant = job.entry, job.metrics, job.wildcards["benchmark"]
    key = entry.key_of(variant)
    source_dir = job.path("corpus").parent
    source = Source.read(source_dir, entry.source_language, job.separator or None)
    family = plan_spread_family(
        source,
        entry.controlled,
        qwen3_token_counter(),
        metrics.buckets,
        metrics.n_bins,
        where=f"benchmarks.{entry.name}.controlled.pieces",
    )
    if key.round >= family.rounds:
        raise ValueError(
            f"benchmarks.{entry.name}.controlled.rounds: round {key.round} would be empty: the "
            f"{len(family.plans)} sampled evidence groups fit in {family.rounds} round(s); set rounds: "
            f"{family.rounds} (or ask for more queries)"
        )
    built = family.variant(key)
    provenance = fmt.Provenance.derived(
        entry, variant, source_dir, {"variant": key.slug, **entry.controlled.model_dump(mode="json")}
    )
    card = fmt.finish(built, provenance, metrics.buckets, metrics.n_bins, job.path("card", "output").parent)
    logger.info(
        "%s: %d queries of %d evidence groups, round %d", variant, len(built.queries), len(family.plans), key.round
    )
    return card


def write_distance_tables(job: DistanceTablesJob) -> pd.DataFrame:
    """The family's cells (mean nDCG@10 with paired intervals, beside each model's token accounting), its series'
    tests (PSI over the levels, the DSI of a distance series; Page's L; Friedman; Wilcoxon against the first level
    with Holm), each cell's multi-piece queries against their members alone, the token views and the figure."""
    from posir.controlled.pieces import DISTANCE_SERIES, POSITION_SERIES
    from posir.figures import distance_figure
    from posir.metrics import distance as d
    from posir.tables.controlled import distance_markdown

    entry, params = job.entry, job.metrics.bootstrap
    per_query = _per_query(job)
    cells, series = entry.controlled.cells()
    cell_frame = pd.DataFrame(
        [{d.CELL: c.index, d.ANCHOR: c.anchor, d.POSITION: c.position, d.DISTANCE: c.distance} for c in cells]
    )
    targets = {
        name: (members, [cells[i].position if name == POSITION_SERIES else cells[i].distance for i in members])
        for name, members in series.items()
    }
    views = _piece_views(job, per_query)
    shares = _score_shares(job, per_query)
    table = d.with_tokens(d.cell_statistics(per_query, cell_frame, params), d.token_accounting(views))
    table = d.with_score_shares(table, d.score_share_means(shares))
    tests, levels = d.series_statistics(per_query, targets, params)
    single = d.single_comparison(per_query, params)
    out = {name: Path(path) for name, path in job.output.items()}
    write_table(table, out["cells_csv"])
    write_table(tests, out["tests_csv"])
    write_table(levels, out["levels_csv"])
    write_table(single, out["single_csv"])
    write_table(views, out["tokens_csv"])
    write_table(shares, out["shares_csv"])
    title = f"{entry.name}: {entry.controlled.pieces} pieces of {entry.source_benchmark}, together and apart"
    write_text(distance_markdown(table, tests, single, title), out["cells_md"])
    panels = [(n, series[n], d.DISTANCE, f"distance between the pieces ({a} fixed)")
              for a, n in DISTANCE_SERIES.items() if n in series]  # fmt: skip
    panels.append((POSITION_SERIES, series[POSITION_SERIES], d.POSITION, "position of the block (pieces adjacent)"))
    distance_figure(table, panels, title, out["figure"])
    return tests


def _per_query(job: DistanceTablesJob) -> pd.DataFrame:
    """Every run's per-query scores joined with its variant's rows: a row per model, setting, query and cell."""
    from posir.metrics import distance as d

    keep = [QID, d.EVIDENCE_GROUP, d.FORM, d.PIECE, d.CELL, d.ACHIEVED_POSITION, d.ACHIEVED_DISTANCE]
    frames = []
    for (variant, model, setting), scores, controlled in zip(job.runs, job.paths("scores"), job.paths("controlled")):
        rows = read_result_tsv(controlled)[keep]
        joined = read_result_tsv(scores)[[QID, d.SCORE]].merge(rows, on=QID, how="inner", validate="one_to_one")
        if len(joined) != len(rows):
            raise ValueError(f"{variant}: {len(rows) - len(joined)} queries of {controlled} have no score in {scores}")
        frames.append(joined.assign(**{MODEL: model, SETTING: setting}))
    return pd.concat(frames, ignore_index=True)


def _piece_views(job: DistanceTablesJob, per_query: pd.DataFrame) -> pd.DataFrame:
    """A row per reader, group, cell and piece: the piece's tokens, how many of them the first window holds, and
    whether one window the reader reads holds every piece (posir.controlled.token_view.pieces_view)."""
    from posir.controlled.token_view import hf_token_offsets, pieces_view
    from posir.evidence import by_query, read_evidence
    from posir.metrics import distance as d
    from posir.models.registry import load_encoder
    from posir.text import Span

    groups = per_query[per_query[d.FORM] != d.SINGLE].drop_duplicates([d.EVIDENCE_GROUP, d.CELL])
    label_of = dict(zip(zip(groups[d.EVIDENCE_GROUP], groups[d.CELL]), groups[QID]))
    documents: dict[int, tuple[Mapping[str, str], Mapping[str, Sequence[Any]]]] = {}
    for variant, corpus, evidence in zip(job.variants, job.paths("corpora"), job.paths("evidence")):
        cell = job.entry.key_of(variant).position_index
        pieces = by_query(read_evidence(evidence))
        wanted = {label_of[key] for key in label_of if key[1] == cell}
        texts = {doc.doc_id: doc.text for doc in fmt.read_corpus(corpus)}
        documents[cell] = (texts, {qid: pieces[qid] for qid in wanted})
    rows: list[dict[str, Any]] = []
    encoders: dict[str, Any] = {}
    for name, reader in job.readers.items():
        if reader.model.name not in encoders:  # a pipeline's second stage shares its model's encoder
            encoders[reader.model.name] = load_encoder(reader.model, job.threads)
        encoder = encoders[reader.model.name]
        offsets = hf_token_offsets(encoder.model.tokenizer)
        budget, window, stride = _reading(encoder, reader, name)
        for (group, cell), qid in sorted(label_of.items()):
            texts, pieces = documents[cell]
            spans = [Span(p.span_start, p.span_end) for p in pieces[qid]]
            text = texts[pieces[qid][0].doc_id]
            windows = encoder.window_spans(text, "document", window, stride) if reader.reads == "windows" else None
            view = pieces_view(text, spans, offsets, budget, windows)
            for index, (piece, share) in enumerate(zip(view.pieces, view.seen_shares())):
                rows.append(
                    {
                        MODEL: name,
                        d.EVIDENCE_GROUP: group,
                        d.CELL: cell,
                        d.PIECE: index,
                        d.FIRST_TOKEN: piece.first_token,
                        d.LAST_TOKEN: piece.last_token,
                        d.DOCUMENT_TOKENS: piece.document_tokens,
                        d.WINDOW_TOKENS: budget,
                        d.TOKENS_SEEN: piece.tokens_seen,
                        d.SEEN_SHARE: share,
                        d.SHARED_WINDOW: view.shared_window,
                    }
                )
    return pd.DataFrame(rows, columns=list(d.VIEW_COLUMNS))


def _score_shares(job: DistanceTablesJob, per_query: pd.DataFrame) -> pd.DataFrame:
    """A row per multi-vector or sparse run, multi-piece query, cell and piece: the share of the query's score for its
    positive that the piece carries (posir.analyses.score_origin.piece_shares), read from the stored vectors."""
    from posir.analyses.score_origin import MULTI_VECTOR, piece_shares
    from posir.evidence import by_query, read_evidence
    from posir.metrics import distance as d
    from posir.results.embeddings import load_sparse_vectors, load_token_vectors

    evidence = dict(zip(job.variants, job.paths("evidence")))
    keys = [MODEL, SETTING, QID, d.CELL]
    rows = per_query[[*keys, d.FORM, d.EVIDENCE_GROUP]]
    frames = []
    files = zip(job.origins, job.origin_outputs, job.paths("origin_queries"), job.paths("origin_corpus"))
    for (variant, model, setting), output, queries, corpus in files:
        load = load_token_vectors if output == MULTI_VECTOR else load_sparse_vectors
        where = f"{model} on {variant} {setting} ({queries}, {corpus})"
        pieces = by_query(read_evidence(evidence[variant]))
        shares = piece_shares(output, pieces, load(queries), load(corpus), where).rename(
            columns={EVIDENCE_SHARE: d.SCORE_SHARE}
        )
        cell = job.entry.key_of(variant).position_index
        frames.append(shares.assign(**{MODEL: model, SETTING: setting, d.CELL: cell}))
        logger.info("score shares by piece: %s on %s, %d queries", model, variant, len(pieces))
    if not frames:
        return pd.DataFrame(columns=list(d.SHARE_COLUMNS))
    shares = pd.concat(frames, ignore_index=True).merge(rows, on=keys, how="left", validate="many_to_one")
    return shares[list(d.SHARE_COLUMNS)]


def _reading(encoder: Any, reader: PieceReader, name: str) -> tuple[int, int, int]:
    """(first window's tokens, window, stride) of a reader: the model's budget, or its configured window."""
    from posir.windows import window_size

    window, stride = window_size(encoder.window_budget("document"), reader.window_tokens, reader.stride_tokens, name)
    return (window if reader.window_tokens is not None else encoder.window_budget("document")), window, stride
