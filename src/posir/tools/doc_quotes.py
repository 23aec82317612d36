"""What the README and docs quote from the default run: each number's file, row and column, each sentence.

Read by ``posir doc-numbers`` (posir.tools.doc_numbers; the parts are posir.tools.quoting). A number is read off a
file of ``results/`` (a table's CSV, a benchmark's card) and written in the format its sentences use; a quote is a
fragment of a document, as the document words it, with ``{key}`` where each number stands; a table is shown whole
between markers. Rewording a quoted sentence means rewording its fragment here as well (the check names the
fragment it cannot find).

Files are named by posir.results.paths (:data:`posir.tools.quoting.PATHS`), columns by the constants and objects of
the measures and statistics that write them (the results contract); models, settings and buckets are the run's data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import yaml

from posir import benchmark as fmt
from posir.metrics.columns import (
    ALL,
    ATTRIBUTE,
    BUCKET,
    CI_HIGH,
    CI_LOW,
    DIFFERENCE,
    GROUP,
    LENGTH_BUCKET,
    MEAN,
    MEASURE,
    MODEL,
    MODEL_A,
    MODEL_B,
    N_QUERIES,
    SETTING,
    bucket_columns,
    suffixed,
)
from posir.metrics.controlled import LENGTH, NO_VARIATION, NOTE, PAGE_P_PRIMACY, PAGE_P_RECENCY, POSITION_INDEX
from posir.metrics.exposure import CORPUS_SHARE, LANGUAGE_ATTRIBUTE, RELEVANT_SHARE
from posir.metrics.measures import POSITION_MEASURE
from posir.metrics.measures.awrf import AWRF
from posir.metrics.measures.expected_exposure import EE_R
from posir.metrics.measures.exposure_share import ExposureShare
from posir.metrics.significance import MEAN_DIFFERENCE
from posir.metrics.trend import (
    PSI_TREND_SIGNIFICANT,
    SLOPE,
    SPEARMAN_P,
    SPEARMAN_RHO,
    THIRDS_CLIFFS_DELTA,
    THIRDS_DIFFERENCE,
    THIRDS_PERMUTATION_P,
)
from posir.plan.controlled import FAMILY_FILES
from posir.results.schemas import BENCHMARK, NDCG, PSI, PSI_TREND, delta
from posir.tables.controlled import CONTROLLED_PSI, NATURAL_PSI
from posir.tools.distance_quotes import DISTANCE_TABLES
from posir.tools.pooling_quotes import POOLING_NUMBERS, POOLING_QUOTES, POOLING_TABLES
from posir.tools.quoting import (
    PATHS,
    Cell,
    Difference,
    JsonValue,
    Number,
    Pair,
    Quote,
    Reduce,
    Results,
    Rows,
    Source,
    Table,
    count,
    fixed,
    number,
    p_value,
    page_p,
    run_file,
    significant,
)

SQUAD = "squad-long"
MAIN = run_file(PATHS.table(SQUAD, "main.csv"))
TRENDS = run_file(PATHS.table(SQUAD, "trends.csv"))
SIGNIFICANCE = run_file(PATHS.significance(SQUAD, "eng-eng", "csv"))
EXPOSURE = run_file(PATHS.table(SQUAD, "exposure.csv"))
EXPOSURE_PAIRS = run_file(PATHS.table(SQUAD, "exposure_pairs.csv"))
XQUAD_EXPOSURE = run_file(PATHS.table("xquad-parallel", "exposure.csv"))
TRANSLATIONS = run_file(PATHS.table("xquad-spa", "translation_comparison.csv"))
MOVED, MOVED_ES = "squad-long-moved", "squad-es-long-moved"
#: The parallel benchmark's languages as the default config.yaml lists them (a language added there is quoted too).
DEFAULT_CONFIG = yaml.safe_load(Path(__file__).resolve().parents[3].joinpath("config.yaml").read_text())
LANGUAGES = tuple(DEFAULT_CONFIG["benchmarks"]["xquad-parallel"]["languages"])
BUCKETS = ("Q1", "Q2", "Q3", "Q4")
#: The measures the docs quote, as their columns and labels name them.
NDCG_LABEL = POSITION_MEASURE.name
EXPOSURE_SHARE, AWRF_COLUMN = ExposureShare(cutoff=10).column, AWRF(cutoff=10).column


def card(benchmark: str, *keys: str) -> JsonValue:
    return JsonValue(run_file(PATHS.benchmark_file(benchmark, fmt.CARD)), keys)


def family_file(family: str, name: str) -> str:
    """One of a controlled family's tables (posir.plan.controlled.FAMILY_FILES: tests_csv, positions_csv, ...)."""
    return run_file(PATHS.table(family, FAMILY_FILES[name]))


def main_cell(model: str, column: str, scale: float = 1.0, path: str = MAIN, setting: str = "eng-eng") -> Cell:
    return Cell(path, column, {MODEL: model, SETTING: setting}, scale)


def trend(model: str, column: str, bucket: str = ALL, scale: float = 1.0) -> Cell:
    return Cell(TRENDS, column, {MODEL: model, SETTING: "eng-eng", BUCKET: bucket}, scale)


def natural_vs_controlled(family: str, model: str, column: str) -> Cell:
    return Cell(family_file(family, "comparison_csv"), column, {MODEL: model, BUCKET: ALL})


def controlled(family: str, model: str, column: str) -> Cell:
    return Cell(family_file(family, "tests_csv"), column, {MODEL: model, LENGTH: ALL})


def position_mean(family: str, model: str, index: int) -> Cell:
    where = {MODEL: model, LENGTH: ALL, POSITION_INDEX: str(index)}
    return Cell(family_file(family, "positions_csv"), MEAN, where, 100.0)


def exposure(model: str, group: str, column: str, scale: float = 100.0) -> Cell:
    where = {MODEL: model, SETTING: "eng-eng", ATTRIBUTE: LENGTH_BUCKET, GROUP: group}
    return Cell(EXPOSURE, column, where, scale)


def exposure_pair(a: str, b: str, group: str, column: str, scale: float) -> Cell:
    where = {MODEL_A: a, MODEL_B: b, SETTING: "eng-eng", GROUP: group, MEASURE: EXPOSURE_SHARE}
    return Cell(EXPOSURE_PAIRS, column, where, scale)


def own_language_share(model: str) -> Reduce:
    """The query's own language's share of the top-10 exposure, averaged over the one-vs-many settings."""
    where = {MODEL: model, ATTRIBUTE: LANGUAGE_ATTRIBUTE}
    cells = tuple(
        Cell(XQUAD_EXPOSURE, EXPOSURE_SHARE, {**where, SETTING: f"{lang}-mul", GROUP: lang}, 100.0)
        for lang in LANGUAGES
    )
    label = (
        f"the ten `<lang>-mul` settings of `{XQUAD_EXPOSURE}` [{MODEL}={model}, {ATTRIBUTE}={LANGUAGE_ATTRIBUTE}, "
        f"{GROUP}=the setting's query language] `{EXPOSURE_SHARE}` x 100"
    )
    return Reduce("mean", cells, label=label)


def translation(benchmark: str, model: str, setting: str, column: str, scale: float = 1.0) -> Cell:
    return Cell(TRANSLATIONS, column, {BENCHMARK: benchmark, MODEL: model, SETTING: setting}, scale)


ONE, TWO = fixed(1), fixed(2)


def _numbers() -> list[Number]:
    numbers: list[Number] = []

    def add(key: str, source: Source, format: Callable[[float], str]) -> None:
        numbers.append(Number(key, source, format))

    # squad-long's main table, as the prose quotes it (the tables themselves are below)
    for model in ("bm25", "me5-small", "minilm-l6", "minilm-l6-chunks", "me5-small-chunks", "bm25.minilm-maxp",
                  "bm25.me5-maxp", "minilm-l6.minilm-maxp", "me5-small.me5-maxp"):  # fmt: skip
        add(f"{SQUAD}.{model}.ndcg", main_cell(model, NDCG, 100.0), ONE)
    for model in ("bm25", "me5-small", "minilm-l6", "use-m3", "minilm-l6-chunks", "me5-small-chunks",
                  "bm25.minilm-maxp", "bm25.me5-maxp", "minilm-l6.minilm-maxp", "me5-small.me5-maxp",
                  "bm25.minilm-firstp", "bm25.me5-firstp"):  # fmt: skip
        add(f"{SQUAD}.{model}.psi", main_cell(model, PSI), TWO)
    add(f"{SQUAD}.bm25.ndcg2", main_cell("bm25", NDCG, 100.0), TWO)
    add(f"{SQUAD}.queries", card(SQUAD, "counts", "queries"), count())
    r2 = tuple(
        Difference(main_cell("minilm-l6", column, 100.0), main_cell("minilm-l6-r2", column, 100.0))
        for column in (NDCG, *bucket_columns(NDCG, BUCKETS))
    )
    add(f"{SQUAD}.r2.largest_difference", Reduce("max", r2, absolute=True), ONE)
    # trends and paired tests
    add(f"{SQUAD}.trend.me5-small.Q1.p", trend("me5-small", SPEARMAN_P, "Q1"), TWO)
    thirds = tuple(trend(m, THIRDS_DIFFERENCE, scale=100.0) for m in ("minilm-l6", "minilm-l6-r2", "me5-small"))
    add(f"{SQUAD}.trend.truncating.thirds.min", Reduce("min", thirds), fixed(0))
    add(f"{SQUAD}.trend.truncating.thirds.max", Reduce("max", thirds), fixed(0))
    add(f"{SQUAD}.trend.use-m3.thirds", trend("use-m3", THIRDS_DIFFERENCE, scale=100.0), ONE)
    add(f"{SQUAD}.trend.use-m3.thirds.p", trend("use-m3", THIRDS_PERMUTATION_P), TWO)
    add(f"{SQUAD}.trend.use-m3.Q3.thirds", trend("use-m3", THIRDS_DIFFERENCE, "Q3", 100.0), ONE)
    for name, (a, b, bucket), format in (
        ("minilm-r2", ("minilm-l6", "minilm-l6-r2", ALL), TWO),
        ("bm25-me5.Q1", ("bm25", "me5-small", "Q1"), TWO),
        ("minilm-use.Q1", ("minilm-l6", "use-m3", "Q1"), ONE),
    ):
        add(
            f"{SQUAD}.significance.{name}",
            Pair(SIGNIFICANCE, a, b, MEAN_DIFFERENCE, {BUCKET: bucket}, 100.0),
            format,
        )
    saliency_pairs = Rows(run_file(PATHS.saliency(SQUAD, "minilm-l6", "pairs")))
    add(f"{SQUAD}.saliency.minilm-l6.pairs", saliency_pairs, count())
    # controlled positions
    for family, model in ((MOVED, "minilm-l6"), (MOVED, "me5-small"), (MOVED_ES, "me5-small")):
        add(f"{family}.{model}.start", position_mean(family, model, 0), ONE)
        add(f"{family}.{model}.end", position_mean(family, model, 4), ONE)
    for model in ("minilm-l6", "me5-small", "use-m3"):
        add(f"{MOVED}.{model}.natural_psi", natural_vs_controlled(MOVED, model, NATURAL_PSI), TWO)
        add(f"{MOVED}.{model}.controlled_psi", natural_vs_controlled(MOVED, model, CONTROLLED_PSI), TWO)
    add(f"{MOVED_ES}.use-m3.natural_psi", natural_vs_controlled(MOVED_ES, "use-m3", NATURAL_PSI), TWO)
    for model in ("minilm-l6-chunks", "bm25.minilm-maxp"):
        add(f"{MOVED}.{model}.page_p_recency", controlled(MOVED, model, PAGE_P_RECENCY), significant(2))
    too_few = card(f"{MOVED}-r0-p0", "stages", "controlled_units", "dropped", "too_few_units")
    add(f"{MOVED}.too_few_units", too_few, count())
    # the benchmarks
    squad_source = run_file(PATHS.source("squad_dev_v1_1", "dev-v1.1.json"))
    add("squad.articles", JsonValue(squad_source, ("data",), length=True), count())
    add("squad.paragraphs", card(SQUAD, "stages", "partition_paragraphs", "entered"), count())
    add(f"{SQUAD}.documents", card(SQUAD, "counts", "documents"), count())
    for bucket in BUCKETS:
        add(f"{SQUAD}.documents.{bucket}", card(SQUAD, "counts", "documents_per_bucket", bucket), count(False))
        add(f"{SQUAD}.queries.{bucket}", card(SQUAD, "counts", "queries_per_bucket", bucket), count(False))
    add("xquad.questions", card("xquad-long-eng", "counts", "queries"), count(False))
    add("xquad-parallel.documents", card("xquad-parallel-eng", "counts", "documents"), count())
    add("xquad-parallel.queries", card("xquad-parallel-eng", "counts", "queries"), count(False))
    add("xquad-parallel.documents.Q3", card("xquad-parallel-eng", "counts", "documents_per_bucket", "Q3"), count())
    add("squad-es.answers", card("squad-es-long", "stages", "validate_answers", "entered"), count())
    empty = card("squad-es-long", "stages", "validate_answers", "dropped", "empty_answer")
    add("squad-es.empty_answers", empty, count())
    for reason, stage in (("answer_offset_mismatch", "validate_answers"), ("empty_answer", "validate_answers"),
                          ("question_id_not_original", "attach_questions"), ("no_valid_answer", "attach_questions"),
                          ("evidence_in_several_documents", "attach_questions")):  # fmt: skip
        add(f"squad-it.{reason}", card("squad-it-long", "stages", stage, "dropped", reason), count())
    python_docs = run_file(PATHS.collection_outputs("python-docs")["card"])
    add("python-docs.texts", JsonValue(python_docs, ("counts", "texts")), count())
    # translation
    apertium = "squad-long-apertium-spa"
    for unit in ("documents", "queries"):
        for which in ("source", "kept"):
            add(f"{apertium}.{unit}.{which}", card(apertium, "translation", "accounting", unit, which), count())
        refused = card(apertium, "translation", "accounting", unit, "dropped", f"refusal_detection_{unit}")
        add(f"{apertium}.{unit}.refused", refused, count())
    cascade = card(apertium, "translation", "accounting", "queries", "dropped", "cascade_deletion")
    add(f"{apertium}.queries.cascade", cascade, count())
    apertium_main = run_file(PATHS.table("squad-long-apertium", "main.csv"))
    for setting in ("spa-spa", "spa-eng"):
        cell = main_cell("bm25", NDCG, 100.0, apertium_main, setting)
        add(f"squad-long-apertium.bm25.{setting}.ndcg", cell, TWO)
    dense = [(m, s) for m in ("me5-small", "use-m3") for s in ("spa-spa", "spa-eng")]
    costs = tuple(translation("xquad-parallel-apertium", m, s, delta(NDCG), 100.0) for m, s in dense)
    add("xquad-spa.dense.cost.min", Reduce("min", costs, absolute=True), ONE)
    add("xquad-spa.dense.cost.max", Reduce("max", costs, absolute=True), ONE)
    psi = tuple(translation("xquad-parallel-apertium", "me5-small", s, delta(PSI)) for s in ("spa-spa", "spa-eng"))
    add("xquad-spa.me5-small.psi.max", Reduce("max", psi), fixed(2, sign=True))
    gain = translation("xquad-parallel-apertium", "bm25", "spa-eng", delta(NDCG), 100.0)
    add("xquad-spa.bm25.spa-eng.gain", gain, TWO)
    # who gets seen
    add(f"exposure.{SQUAD}.Q4.corpus", exposure("minilm-l6", "Q4", CORPUS_SHARE), ONE)
    for group in ("Q1", "Q4"):
        add(f"exposure.{SQUAD}.{group}.relevant", exposure("minilm-l6", group, RELEVANT_SHARE), ONE)
        add(f"exposure.{SQUAD}.minilm-l6.{group}", exposure("minilm-l6", group, EXPOSURE_SHARE), ONE)
    q4 = ("minilm-l6", "minilm-l6-chunks", "Q4")
    add(f"exposure.{SQUAD}.chunks.to_Q4", exposure_pair(*q4, DIFFERENCE, -100.0), ONE)
    add(f"exposure.{SQUAD}.chunks.to_Q4.low", exposure_pair(*q4, CI_HIGH, -100.0), ONE)
    add(f"exposure.{SQUAD}.chunks.to_Q4.high", exposure_pair(*q4, CI_LOW, -100.0), ONE)
    q1 = ("minilm-l6", "minilm-l6-chunks", "Q1")
    add(f"exposure.{SQUAD}.chunks.from_Q1", exposure_pair(*q1, DIFFERENCE, 100.0), ONE)
    add(f"exposure.{SQUAD}.chunks.from_Q1.low", exposure_pair(*q1, CI_LOW, 100.0), ONE)
    add(f"exposure.{SQUAD}.chunks.from_Q1.high", exposure_pair(*q1, CI_HIGH, 100.0), ONE)
    me5 = exposure_pair("me5-small", "me5-small-chunks", "Q4", DIFFERENCE, -100.0)
    add(f"exposure.{SQUAD}.me5-chunks.to_Q4", me5, fixed(1, sign=True))
    for model in ("minilm-l6", "minilm-l6-chunks"):
        add(f"exposure.{SQUAD}.{model}.ee_r", exposure(model, "Q1", EE_R, 1.0), TWO)
        add(f"exposure.{SQUAD}.{model}.awrf", exposure(model, "Q1", AWRF_COLUMN, 1.0), fixed(3))
    for model in ("bm25", "minilm-l6", "me5-small", "use-m3"):
        add(f"exposure.xquad-parallel.{model}.own_language", own_language_share(model), fixed(0))
    return numbers


NUMBERS: list[Number] = _numbers() + POOLING_NUMBERS

FINDINGS, README, BENCHMARKS = "docs/findings.md", "README.md", "docs/benchmarks.md"

#: Each fragment as its document words it, ``{key}`` where a number stands (lines may wrap anywhere between words).
QUOTES: list[Quote] = [
    Quote(FINDINGS, "from the default run at commit {run.commit} (its tables of {run.date});"),
    Quote(FINDINGS, "nDCG@10 in %; all {squad-long.queries} queries;"),
    Quote(FINDINGS, "least position-sensitive dense model (PSI {squad-long.use-m3.psi}), at the"),
    Quote(FINDINGS, "numbers within {squad-long.r2.largest_difference} points here (overall and in every bucket)"),
    Quote(
        FINDINGS,
        "chunked (best window) and BM25 -> MaxP reach {squad-long.minilm-l6-chunks.ndcg} nDCG@10 (PSI "
        "{squad-long.minilm-l6-chunks.psi}) and {squad-long.bm25.minilm-maxp.ndcg} (PSI "
        "{squad-long.bm25.minilm-maxp.psi}) for MiniLM, against {squad-long.minilm-l6.ndcg} and PSI "
        "{squad-long.minilm-l6.psi} when MiniLM reads only its first 256 tokens, and "
        "{squad-long.me5-small-chunks.ndcg} (PSI {squad-long.me5-small-chunks.psi}) and "
        "{squad-long.bm25.me5-maxp.ndcg} (PSI {squad-long.bm25.me5-maxp.psi}) for me5-small, against "
        "{squad-long.me5-small.ndcg} and {squad-long.me5-small.psi} truncated at 512;",
    ),
    Quote(
        FINDINGS,
        "own top 100 by MaxP gives {squad-long.minilm-l6.minilm-maxp.ndcg} (MiniLM, PSI "
        "{squad-long.minilm-l6.minilm-maxp.psi}) and {squad-long.me5-small.me5-maxp.ndcg} (me5-small, PSI "
        "{squad-long.me5-small.me5-maxp.psi}).",
    ),
    Quote(FINDINGS, "keeps the bias (PSI {squad-long.bm25.minilm-firstp.psi} and {squad-long.bm25.me5-firstp.psi}):"),
    Quote(FINDINGS, "least position-sensitive ({squad-long.bm25.ndcg}, PSI {squad-long.bm25.psi})."),
    Quote(
        FINDINGS,
        "takes MiniLM from {squad-long-moved.minilm-l6.start} to {squad-long-moved.minilm-l6.end} nDCG@10 and "
        "me5-small from {squad-long-moved.me5-small.start} to {squad-long-moved.me5-small.end} (Spanish "
        "{squad-es-long-moved.me5-small.start} to {squad-es-long-moved.me5-small.end}), a controlled PSI of "
        "{squad-long-moved.minilm-l6.controlled_psi} and {squad-long-moved.me5-small.controlled_psi} beside natural "
        "{squad-long-moved.minilm-l6.natural_psi} and {squad-long-moved.me5-small.natural_psi}. USE's natural PSI "
        "of {squad-long-moved.use-m3.natural_psi} ({squad-es-long-moved.use-m3.natural_psi} in Spanish) vanishes "
        "under control ({squad-long-moved.use-m3.controlled_psi}):",
    ),
    Quote(
        FINDINGS,
        "(Page's recency p = {squad-long-moved.minilm-l6-chunks.page_p_recency} and "
        "{squad-long-moved.bm25.minilm-maxp.page_p_recency}), not early ones.",
    ),
    Quote(FINDINGS, "the trend has p = {squad-long.trend.me5-small.Q1.p});"),
    Quote(
        FINDINGS,
        "first third is found {squad-long.trend.truncating.thirds.min}-{squad-long.trend.truncating.thirds.max} "
        "points better overall. BM25's PSI of {squad-long.bm25.psi} is noise",
    ),
    Quote(
        FINDINGS,
        "and USE's {squad-long.use-m3.psi} is not significant as a trend either, though its first third beats its "
        "last by {squad-long.trend.use-m3.thirds} points overall (p = {squad-long.trend.use-m3.thirds.p}) and "
        "{squad-long.trend.use-m3.Q3.thirds} points in Q3.",
    ),
    Quote(
        FINDINGS,
        "except MiniLM against MiniLM-R2 ({squad-long.significance.minilm-r2} points, and every bucket); per bucket, "
        "BM25 and me5-small do not differ on Q1 documents ({squad-long.significance.bm25-me5.Q1} points), nor "
        "MiniLM and USE ({squad-long.significance.minilm-use.Q1} points).",
    ),
    Quote(FINDINGS, "gradient saliency ({squad-long.saliency.minilm-l6.pairs} pairs with"),
    Quote(FINDINGS, "That is what its PSI of {squad-long.minilm-l6.psi} measures"),
    Quote(
        FINDINGS,
        "{squad-long-apertium-spa.documents.kept} of {squad-long-apertium-spa.documents.source} documents and "
        "{squad-long-apertium-spa.queries.kept} of {squad-long-apertium-spa.queries.source} queries kept",
    ),
    Quote(
        FINDINGS,
        "card.json`: {squad-long-apertium-spa.documents.refused} document and "
        "{squad-long-apertium-spa.queries.refused} questions dense with untranslated names are detected as English "
        "and dropped, {squad-long-apertium-spa.queries.cascade} questions follow their document). BM25 gives "
        "nDCG@10 {squad-long-apertium.bm25.spa-spa.ndcg} on spa-spa and {squad-long-apertium.bm25.spa-eng.ndcg} on "
        "spa-eng (English {squad-long.bm25.ndcg2}).",
    ),
    Quote(
        FINDINGS,
        "(`xquad-parallel-eng`: {xquad-parallel.documents} documents, {xquad-parallel.queries} questions), once",
    ),
    Quote(
        FINDINGS,
        "costs the dense multilingual retrievers {xquad-spa.dense.cost.min}-{xquad-spa.dense.cost.max} nDCG@10 "
        "points and adds a little position sensitivity in most settings (PSI up to {xquad-spa.me5-small.psi.max} "
        "for",
    ),
    Quote(FINDINGS, "BM25 *gains* {xquad-spa.bm25.spa-eng.gain} points with apertium"),
    Quote(
        README,
        "the longest documents (Q4, over 1,536 tokens) are {exposure.squad-long.Q4.corpus} % of the corpus but hold "
        "{exposure.squad-long.Q4.relevant} % of the relevant documents. MiniLM, which truncates at 256 tokens, gives "
        "them {exposure.squad-long.minilm-l6.Q4} % of the top-10 exposure. It gives the shortest (Q1) "
        "{exposure.squad-long.minilm-l6.Q1} %, though they hold {exposure.squad-long.Q1.relevant} % of the relevant "
        "documents,",
    ),
    Quote(
        README,
        "moves {exposure.squad-long.chunks.to_Q4} points [{exposure.squad-long.chunks.to_Q4.low}, "
        "{exposure.squad-long.chunks.to_Q4.high}] of top-10 exposure to Q4 and {exposure.squad-long.chunks.from_Q1} "
        "[{exposure.squad-long.chunks.from_Q1.low}, {exposure.squad-long.chunks.from_Q1.high}] away from Q1,",
    ),
    Quote(
        README,
        "(expected exposure EE-R {exposure.squad-long.minilm-l6.ee_r} to {exposure.squad-long.minilm-l6-chunks.ee_r}); "
        "me5-small's chunks do the same ({exposure.squad-long.me5-chunks.to_Q4} points to Q4).",
    ),
    Quote(
        README,
        "lower for chunks ({exposure.squad-long.minilm-l6-chunks.awrf} against {exposure.squad-long.minilm-l6.awrf}),",
    ),
    Quote(
        README,
        "takes on average {exposure.xquad-parallel.bm25.own_language} % of the top-10 exposure under BM25, "
        "{exposure.xquad-parallel.minilm-l6.own_language} % under MiniLM, "
        "{exposure.xquad-parallel.me5-small.own_language} % under me5-small and "
        "{exposure.xquad-parallel.use-m3.own_language} % under USE",
    ),
    Quote(
        BENCHMARKS,
        "SQuAD v1.1 dev's {squad.articles} articles, {squad.paragraphs} paragraphs and {squad-long.queries} questions.",
    ),
    Quote(
        BENCHMARKS,
        "gives {squad-long.documents} documents ({squad-long.documents.Q1}/{squad-long.documents.Q2}/"
        "{squad-long.documents.Q3}/{squad-long.documents.Q4} in Q1..Q4) and {squad-long.queries} queries "
        "({squad-long.queries.Q1}/{squad-long.queries.Q2}/{squad-long.queries.Q3}/{squad-long.queries.Q4};",
    ),
    Quote(BENCHMARKS, "XQuAD's {xquad.questions} questions in each of"),
    Quote(BENCHMARKS, "reach only Q1-Q2 ({xquad-parallel.documents.Q3} Q3 document)"),
    Quote(BENCHMARKS, "Of its {squad-es.answers} answers {squad-es.empty_answers} are empty"),
    Quote(
        BENCHMARKS,
        "Its {squad-it.answer_offset_mismatch} answer offsets that do not match their text, {squad-it.empty_answer} "
        "empty answers and {squad-it.question_id_not_original} renamed question ids (`question_id_pattern`) are "
        "detected, dropped and counted, never used; {squad-it.evidence_in_several_documents} questions whose "
        "paragraph occurs twice and the {squad-it.no_valid_answer} left without a valid answer are",
    ),
    Quote("docs/controlled.md", "in the default run {squad-long-moved.too_few_units} queries whose"),
    Quote("docs/models.md", "`text_collections.python-docs`: {python-docs.texts} sentences of"),
    *POOLING_QUOTES,
]


def _marked(results: Results, cell: Cell, trend_column: str) -> str:
    """A PSI with § where its row's trend column names a significant direction."""
    value = cell.shown(results, TWO)
    return f"{value} §" if Cell(cell.path, trend_column, cell.where).text(results) else value


MODELS = ("bm25", "me5-small", "minilm-l6", "minilm-l6-r2", "use-m3")
SIGNED = fixed(2, sign=True)


def main_rows(results: Results, models: Sequence[str] = MODELS, path: str = MAIN) -> list[list[str]]:
    """Per model: queries, nDCG@10 (%) overall and per bucket, PSI overall and per bucket."""
    rows = []
    for model in models:
        row = [model, "eng-eng", count(False)(main_cell(model, N_QUERIES, path=path).value(results))]
        row += [main_cell(model, c, 100.0, path).shown(results, TWO) for c in (NDCG, *bucket_columns(NDCG, BUCKETS))]
        row += [main_cell(model, c, path=path).shown(results, TWO) for c in (PSI, *bucket_columns(PSI, BUCKETS))]
        rows.append(row)
    return rows


PIPELINES = (
    ("BM25", "bm25"),
    ("MiniLM (truncates at 256 tokens)", "minilm-l6"),
    ("MiniLM chunked (best window)", "minilm-l6-chunks"),
    ("BM25 -> MiniLM MaxP", "bm25.minilm-maxp"),
    ("BM25 -> MiniLM FirstP", "bm25.minilm-firstp"),
    ("MiniLM -> MiniLM MaxP", "minilm-l6.minilm-maxp"),
    ("me5-small (truncates at 512 tokens)", "me5-small"),
    ("me5-small chunked (best window)", "me5-small-chunks"),
    ("BM25 -> me5-small MaxP", "bm25.me5-maxp"),
    ("BM25 -> me5-small FirstP", "bm25.me5-firstp"),
    ("me5-small -> me5-small MaxP", "me5-small.me5-maxp"),
)


def pipeline_rows(
    results: Results, pipelines: Sequence[tuple[str, str]] = PIPELINES, path: str = MAIN
) -> list[list[str]]:
    """Per entry or pipeline: queries, nDCG@10 (%), PSI overall and per bucket, § on a significant trend."""
    rows = []
    for label, model in pipelines:
        row = [label, count(False)(main_cell(model, N_QUERIES, path=path).value(results))]
        row += [main_cell(model, NDCG, 100.0, path).shown(results, TWO)]
        row += [_marked(results, main_cell(model, PSI, path=path), PSI_TREND)]
        row += [
            _marked(results, main_cell(model, suffixed(PSI, b), path=path), suffixed(PSI_TREND, b)) for b in BUCKETS
        ]
        rows.append(row)
    return rows


CONTROLLED = (
    ("BM25", MOVED, "bm25"),
    ("MiniLM (256 tokens)", MOVED, "minilm-l6"),
    ("MiniLM-R2", MOVED, "minilm-l6-r2"),
    ("me5-small (512 tokens)", MOVED, "me5-small"),
    ("USE (reads everything)", MOVED, "use-m3"),
    ("MiniLM chunked", MOVED, "minilm-l6-chunks"),
    ("BM25 -> MiniLM MaxP", MOVED, "bm25.minilm-maxp"),
    ("MiniLM -> MiniLM MaxP", MOVED, "minilm-l6.minilm-maxp"),
    (f"me5-small, Spanish (`{MOVED_ES}`)", MOVED_ES, "me5-small"),
    ("USE, Spanish", MOVED_ES, "use-m3"),
)


def controlled_rows(results: Results, entries: Sequence[tuple[str, str, str]] = CONTROLLED) -> list[list[str]]:
    """Per family and model: natural and controlled PSI, nDCG@10 at the first and last position, Page's test."""
    rows = []
    for label, family, model in entries:
        columns = (NATURAL_PSI, CONTROLLED_PSI, suffixed(CONTROLLED_PSI, CI_LOW), suffixed(CONTROLLED_PSI, CI_HIGH))
        psi = [natural_vs_controlled(family, model, c).shown(results, TWO) for c in columns]
        last = max(int(r[POSITION_INDEX]) for r in results.rows(family_file(family, "positions_csv")))
        start, end = (ONE(position_mean(family, model, i).value(results)) for i in (0, last))
        page = controlled(family, model, PAGE_P_PRIMACY)
        identical = controlled(family, model, NOTE).text(results) == NO_VARIATION
        p = "- (identical at every position)" if identical and not page.text(results) else page.shown(results, page_p)
        rows.append([label, psi[0], f"{psi[1]} [{psi[2]}, {psi[3]}]", f"{start} -> {end}", p])
    return rows


#: The trend file's values the trends table shows (nDCG@10's slope over position bins, Spearman, the thirds test).
TREND_VALUES = (PSI, SLOPE, SPEARMAN_RHO, SPEARMAN_P, THIRDS_DIFFERENCE, THIRDS_PERMUTATION_P, THIRDS_CLIFFS_DELTA)


def trend_rows(results: Results, models: Sequence[str] = MODELS, path: str = TRENDS) -> list[list[str]]:
    """Per model, all buckets: PSI (§ on a significant trend), slope, Spearman, first against last third."""
    rows = []
    for model in models:
        row = Cell(path, PSI, {MODEL: model, SETTING: "eng-eng", BUCKET: ALL}).row(results)
        value = {column: number(row[column], f"{path}, {model}") for column in TREND_VALUES}
        psi = TWO(value[PSI]) + (" §" if row[PSI_TREND_SIGNIFICANT] == "True" else "")
        rows.append([
            model,
            psi,
            SIGNED(100 * value[SLOPE]),
            SIGNED(value[SPEARMAN_RHO]),
            p_value(3)(value[SPEARMAN_P]),
            SIGNED(100 * value[THIRDS_DIFFERENCE]),
            p_value(3)(value[THIRDS_PERMUTATION_P]),
            SIGNED(value[THIRDS_CLIFFS_DELTA]),
        ])  # fmt: skip
    return rows


def translation_rows(
    results: Results,
    path: str = TRANSLATIONS,
    human: str = "xquad-parallel-human",
    machine: str = "xquad-parallel-apertium",
    models: Sequence[str] = ("bm25", "me5-small", "use-m3"),
    settings: Sequence[str] = ("spa-spa", "spa-eng"),
) -> list[list[str]]:
    """Per setting and model: nDCG@10 (%) and PSI of the human and the machine translation, and the differences."""
    rows = []
    for setting in settings:
        for model in models:
            reference, other = ({BENCHMARK: b, MODEL: model, SETTING: setting} for b in (human, machine))
            rows.append([
                model,
                setting,
                TWO(Cell(path, NDCG, reference, 100.0).value(results)),
                TWO(Cell(path, NDCG, other, 100.0).value(results)),
                SIGNED(Cell(path, delta(NDCG), other, 100.0).value(results)),
                TWO(Cell(path, PSI, reference).value(results)),
                TWO(Cell(path, PSI, other).value(results)),
                SIGNED(Cell(path, delta(PSI), other).value(results)),
            ])  # fmt: skip
    return rows


RIGHT = "---:"
TRANSLATION_HEADER = (MODEL, SETTING, f"{NDCG_LABEL} human", f"{NDCG_LABEL} apertium", "difference", "PSI human")
TRANSLATION_HEADER += ("PSI apertium", "difference")
TABLES: list[Table] = [
    Table(
        "findings-main",
        FINDINGS,
        (MODEL, SETTING, N_QUERIES, NDCG_LABEL, *BUCKETS, "PSI", *(f"PSI {b}" for b in BUCKETS)),
        main_rows,
        f"`{MAIN}` ({NDCG_LABEL} x 100)",
        ("---", "---", *[RIGHT] * 11),
    ),
    Table(
        "findings-pipelines",
        FINDINGS,
        ("pipeline", "n", NDCG_LABEL, "PSI", *(f"PSI {b}" for b in BUCKETS)),
        pipeline_rows,
        f"`{MAIN}` (§ where `{PSI_TREND}*` names a direction)",
        ("---", *[RIGHT] * 7),
    ),
    Table(
        "findings-controlled",
        FINDINGS,
        (MODEL, "natural PSI", "controlled PSI [95% CI]", f"{NDCG_LABEL} at start -> end", "Page p (primacy)"),
        controlled_rows,
        f"`{family_file('<family>', 'comparison_csv')}`, `{FAMILY_FILES['positions_csv']}` (first and last position) "
        f"and `{FAMILY_FILES['tests_csv']}`, {BUCKET} or {LENGTH} `{ALL}`",
        ("---", *[RIGHT] * 4),
    ),
    Table(
        "findings-trends",
        FINDINGS,
        (MODEL, "PSI", SLOPE, "Spearman ρ", "p", "first − last third", "p (permutation)", "Cliff's δ"),
        trend_rows,
        f"`{TRENDS}`, {BUCKET} `{ALL}` (slope and thirds x 100; § where `{PSI_TREND_SIGNIFICANT}`)",
        ("---", *[RIGHT] * 7),
    ),
    Table(
        "findings-translation",
        FINDINGS,
        TRANSLATION_HEADER,
        translation_rows,
        f"`{TRANSLATIONS}` (the human and apertium rows; differences are the apertium row's `{delta('*')}`)",
        ("---", "---", *[RIGHT] * 6),
    ),
    *(DISTANCE_TABLES + POOLING_TABLES),  # from their own modules (posir.tools.distance_quotes, .pooling_quotes)
]
