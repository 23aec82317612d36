"""The results contract: the columns of every result table, and the only code that reads result files.

Every evaluated run (a model on one benchmark and setting) writes the same files: its per-query
scores, and its aggregates (PosIR section 5.2) -- the mean nDCG@10 per length bucket and relative
position bin (``bins``), per bucket both bucket means and PSI (``summary``), their bootstrap
intervals (``bootstrap``, ``bootstrap_bins``) and the position-trend tests (``trend``). The tables
built from them (:mod:`posir.tables.build`) stack or widen those columns: the main, long, trends and
languages tables (PosIR Tables 10-11), the paired significance and PSI-difference tables, the paper
tables (PosIR Tables 2-3), the comparison of translations, the language bias of one-vs-many runs
(Multi-EuP) and the analyses' tables (PosIR section 5.3, Zeng et al. Appendix A.4).

This module names their columns: producers write them, tables and figures read them, under these
names only. A column of a measure is named by its object (:mod:`posir.metrics.measures`), never by a
literal. :func:`read_result_tsv` reads a result file with its ids and labels kept as text.

Layout: shared columns and values; one section per file or table, each ending in its ``*_COLUMNS``
(a function of the length buckets where the table is wide); the run's files by the names the
workflow gives them (:data:`RUN_TABLES`); where every result lives (:class:`ResultPaths`, one method per
kind of file, used by the plan for rule outputs and job inputs alike); the readers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from posir import benchmark as fmt
from posir.metrics.measures import PER_QUERY, POSITION_MEASURE

if TYPE_CHECKING:
    import pandas as pd

# --- shared columns and values -------------------------------------------------------------------

QID = "qid"
DOC_ID = "doc_id"
MODEL = "model"
SETTING = "setting"
#: Every table of runs starts with these: one model evaluated in one setting.
ID_COLUMNS = (MODEL, SETTING)
LENGTH_BUCKET = "length_bucket"  # a query's length bucket, from its positive document (benchmark positions)
RELATIVE_POSITION = "relative_position"
POSITION_BIN = "position_bin"
BUCKET = "bucket"  # an aggregate row's length bucket, or ALL
ALL = "all"  # the bucket of all queries, whatever their length (queries outside every bucket included)
N_QUERIES = "n_queries"
#: The position measure's column: nDCG@10 per query and per bin, over all queries in the main table.
NDCG = POSITION_MEASURE.column
#: A bucket's nDCG@10 as PosIR reports it, the mean of its non-empty bin means (PosIR section 5.2) ...
BIN_MEAN = POSITION_MEASURE.of("bin_mean")
#: ... and the plain mean over its queries, reported beside it.
QUERY_MEAN = POSITION_MEASURE.of("query_mean")
#: The Position Sensitivity Index: 1 - min/max of the bin means (Zeng et al., section 3.3).
PSI = "psi"
PSI_BINS_USED = "psi_bins_used"  # bins holding at least metrics.min_bin_queries queries
PSI_BINS_SKIPPED = "psi_bins_skipped"  # non-empty bins below it, comma-separated
#: Languages of a run's setting that its model does not declare (posir.config.languages_outside_model).
LANGUAGES_OUTSIDE_MODEL = "languages_outside_model"
# Per bucket of a run's summary: the trend test's p-value, the trend's direction, whether p < alpha
PSI_TREND_P, PSI_TREND_DIRECTION, PSI_TREND_SIGNIFICANT = "psi_trend_p", "psi_trend_direction", "psi_trend_significant"
PSI_TREND_COLUMNS = (PSI_TREND_P, PSI_TREND_DIRECTION, PSI_TREND_SIGNIFICANT)
# Bootstrap intervals (posir.metrics.bootstrap): ``<column>_ci_low`` etc.
CI_LOW, CI_HIGH, BOOTSTRAP_BIAS = "ci_low", "ci_high", "bootstrap_bias"
INTERVAL_SUFFIXES = (f"_{CI_LOW}", f"_{CI_HIGH}", f"_{BOOTSTRAP_BIAS}")
N_RESAMPLES, CONFIDENCE, INTERVAL = "n_resamples", "confidence", "interval"
ALPHA, P_VALUE = "alpha", "p_value"


def suffixed(column: str, suffix: str) -> str:
    """A column derived from another: ``suffixed(PSI, "Q1")`` is ``psi_Q1``, ``suffixed(NDCG, CI_LOW)``
    ``ndcg@10_ci_low``."""
    return f"{column}_{suffix}"


def bucket_columns(column: str, buckets: Sequence[str]) -> list[str]:
    """A wide table's per-bucket columns of ``column``, in bucket order: ``psi_Q1``, ``psi_Q2``, ..."""
    return [suffixed(column, bucket) for bucket in buckets]


def with_interval(column: str) -> tuple[str, str, str, str]:
    """A bootstrapped statistic and its interval: the point value, ``_ci_low``, ``_ci_high``, ``_bootstrap_bias``."""
    return column, suffixed(column, CI_LOW), suffixed(column, CI_HIGH), suffixed(column, BOOTSTRAP_BIAS)


# --- per-query scores (posir.steps.evaluation.score_run) -----------------------------------------

#: One row per evaluated query: its measures (posir.metrics.measures.PER_QUERY), then its positive's position
#: (posir.benchmark.POSITION_FIELDS); any further position field of the benchmark (``own_relative_position``)
#: follows, and, for a dense model, DOC_INPUT_TOKENS.
SCORE_COLUMNS = (
    QID,
    *(measure.column for measure in PER_QUERY),
    DOC_ID,
    "doc_token_length",
    LENGTH_BUCKET,
    RELATIVE_POSITION,
    POSITION_BIN,
    "span_start",
    "span_end",
    "doc_char_length",
)
DOC_INPUT_TOKENS = "doc_input_tokens"  # token positions the model processed for the document, summed over windows

# --- a run's aggregates (posir.metrics.aggregate, posir.steps.evaluation.aggregate_scores) ---------

BIN_START, BIN_END = "bin_start", "bin_end"
#: Per (bucket or ALL, position bin): the bin's edges, query count and mean nDCG@10 (NaN when empty).
BINS_COLUMNS = (BUCKET, POSITION_BIN, BIN_START, BIN_END, N_QUERIES, NDCG)
#: Per bucket (and ALL): what aggregate.summarize computes and published results fill (posir.published).
BUCKET_STATISTICS = (BUCKET, N_QUERIES, BIN_MEAN, QUERY_MEAN, PSI, PSI_BINS_USED, PSI_BINS_SKIPPED)
#: A run's summary file: the bucket statistics, the languages outside the model, and (with
#: ``metrics.statistics``) whether each PSI rests on a significant position trend.
SUMMARY_COLUMNS = (*BUCKET_STATISTICS, LANGUAGES_OUTSIDE_MODEL, *PSI_TREND_COLUMNS)

# --- a run's bootstrap intervals (posir.metrics.bootstrap) --------------------------------------------

PSI_DEFINED_SHARE = "psi_defined_share"  # the share of resamples in which PSI is defined
#: Per bucket (and ALL): both bucket means and PSI, each with its interval; resamples, coverage, interval kind.
BOOTSTRAP_COLUMNS = (
    BUCKET,
    N_QUERIES,
    N_RESAMPLES,
    CONFIDENCE,
    *with_interval(BIN_MEAN),
    *with_interval(QUERY_MEAN),
    *with_interval(PSI),
    PSI_DEFINED_SHARE,
    INTERVAL,
)
#: Per (bucket, position bin): the bin mean and its interval (the bands of the position curves).
BOOTSTRAP_BINS_COLUMNS = (BUCKET, POSITION_BIN, N_QUERIES, NDCG, suffixed(NDCG, CI_LOW), suffixed(NDCG, CI_HIGH))

# --- a run's position trends (posir.metrics.trend, posir.steps.evaluation.position_trends) ------------

BINS_USED, BINS_SKIPPED = "bins_used", "bins_skipped"
SLOPE, SPEARMAN_RHO = "slope", "spearman_rho"
#: Per bucket: the bin means against position (PSI's bins): OLS slope, Pearson, Spearman, Kendall with p-values.
TREND_FIT_COLUMNS = (
    BUCKET,
    BINS_USED,
    BINS_SKIPPED,
    SLOPE,
    "slope_stderr",
    "slope_p",
    "intercept",
    "pearson_r",
    "pearson_p",
    SPEARMAN_RHO,
    "spearman_p",
    "kendall_tau",
    "kendall_p",
)
DIRECTION, TEST = "direction", "test"
#: Per bucket: PSI beside the chosen trend test's p-value and whether it lies below alpha (trend.flag_psi_trends).
PSI_TREND_FLAG_COLUMNS = (BUCKET, PSI, BINS_USED, DIRECTION, TEST, P_VALUE, ALPHA, PSI_TREND_SIGNIFICANT)
DIFFERENCE, PERMUTATION_P, CLIFFS_DELTA = "difference", "permutation_p", "cliffs_delta"
#: Per bucket: per-query nDCG@10 with the evidence in the first third against the last (trend.thirds_test).
THIRDS_COLUMNS = (
    BUCKET,
    "n_first",
    "n_last",
    "mean_first",
    "mean_last",
    DIFFERENCE,
    PERMUTATION_P,
    "cohens_d",
    CLIFFS_DELTA,
)
THIRDS_PREFIX = "thirds_"
#: A run's trend file: the fit, the PSI flag, the thirds test (its columns prefixed ``thirds_``).
TREND_COLUMNS = (
    *TREND_FIT_COLUMNS,
    *(c for c in PSI_TREND_FLAG_COLUMNS if c not in (BUCKET, BINS_USED)),
    *(THIRDS_PREFIX + c for c in THIRDS_COLUMNS if c != BUCKET),
)

#: Every file of an evaluated run, by the name the workflow gives its output, with its columns (the per-query
#: table's leading ones). A paths section keyed the same way will say where each lies.
RUN_TABLES: dict[str, tuple[str, ...]] = {
    "per_query": SCORE_COLUMNS,
    "bins": BINS_COLUMNS,
    "summary": SUMMARY_COLUMNS,
    "bootstrap": BOOTSTRAP_COLUMNS,
    "bootstrap_bins": BOOTSTRAP_BINS_COLUMNS,
    "trend": TREND_COLUMNS,
}

# --- a benchmark's tables: main, long, trends, languages (PosIR Tables 10-11), language bias ----------

PSI_TREND = "psi_trend"  # main table: the direction of a significant trend ("primacy", "recency") or ""
N_QUERIES_OUTSIDE_BUCKETS = "n_queries_outside_buckets"  # counted overall and in no bucket


def main_columns(buckets: Sequence[str]) -> tuple[str, ...]:
    """The main table, one row per run: nDCG@10 overall (query mean) and per bucket (bin mean), PSI overall and per
    bucket, the buckets' query means and counts, each PSI's significant trend and its p-value, the flags."""
    trends: list[str] = []
    for suffix in ("", *(f"_{b}" for b in buckets)):
        trends += [PSI_TREND + suffix, PSI_TREND_P + suffix]
    return (
        *ID_COLUMNS,
        N_QUERIES,
        NDCG,
        *bucket_columns(NDCG, buckets),
        PSI,
        *bucket_columns(PSI, buckets),
        *bucket_columns(QUERY_MEAN, buckets),
        *bucket_columns(N_QUERIES, buckets),
        *trends,
        LANGUAGES_OUTSIDE_MODEL,
        N_QUERIES_OUTSIDE_BUCKETS,
    )


def headline_columns(buckets: Sequence[str]) -> tuple[str, ...]:
    """nDCG@10 and PSI, overall and per bucket: the values of a run that tables compare and average over settings
    (PosIR Tables 2-3) or languages (Tables 10-11)."""
    return NDCG, *bucket_columns(NDCG, buckets), PSI, *bucket_columns(PSI, buckets)


# The long table is ID_COLUMNS then a run's summary columns, one row per (run, bucket); with bootstraps, the
# bootstrap's interval columns follow (posir.metrics.bootstrap.interval_columns), and PSI_LOW_BINS.

#: The trends table: a run's trend file, one row per (run, bucket).
TRENDS_TABLE_COLUMNS = (*ID_COLUMNS, *TREND_COLUMNS)

QUERY_LANGUAGE, CORPUS_LANGUAGE, DOCUMENT_LANGUAGE = "query_language", "corpus_language", "document_language"
SETTING_TYPE = "setting_type"
MONOLINGUAL, CROSS_LINGUAL, ONE_VS_MANY_TYPE = "monolingual", "cross-lingual", "one-vs-many"
#: The values of SETTING_TYPE, in the order the languages table shows them; a one-vs-many corpus holds every language.
SETTING_TYPES = (MONOLINGUAL, CROSS_LINGUAL, ONE_VS_MANY_TYPE)


def languages_columns(buckets: Sequence[str]) -> tuple[str, ...]:
    """The languages table (PosIR Tables 10-11): the main table with each setting's languages and type."""
    return (*ID_COLUMNS, QUERY_LANGUAGE, CORPUS_LANGUAGE, SETTING_TYPE, *main_columns(buckets)[len(ID_COLUMNS) :])


SHARE = "share"
#: Per (model, query language, document language): the document language's share of the top results.
LANGUAGE_BIAS_COLUMNS = (MODEL, QUERY_LANGUAGE, DOCUMENT_LANGUAGE, SHARE)

# --- who gets seen: exposure by document group (posir.steps.exposure) ---------------------------------

ATTRIBUTE, GROUP = "attribute", "group"
#: the depths whose exposure share each group row gives, and AWRF's (TREC Fair reads a whole ranking; ours reads
#: what a user reads, as nDCG@10)
EXPOSURE_DEPTHS = (10, 100)
AWRF_DEPTH = 10
#: Per (model, setting, attribute, group): the group's share of the corpus and of the relevant documents, its mean
#: share of the top 10 and 100's exposure, and the run's AWRF@10 for the attribute and expected exposure (the same
#: on every group row of a run: they are the run's, not the group's).
EXPOSURE_COLUMNS = (
    MODEL,
    SETTING,
    ATTRIBUTE,
    GROUP,
    "n_queries",
    "corpus_share",
    "relevant_share",
    *(f"exposure_share@{depth}" for depth in EXPOSURE_DEPTHS),
    f"awrf@{AWRF_DEPTH}",
    "ee_l",
    "ee_d",
    "ee_r",
)
EXPOSURE_MEASURES = tuple(EXPOSURE_COLUMNS[7:])
#: Per (model, setting, attribute): mean PEER over queries, the queries whose test is undefined, and per grade the
#: mean p-value (``p_grade_<g>`` columns follow)
PEER_COLUMNS = (MODEL, SETTING, ATTRIBUTE, "cutoff", "n_queries", "n_undefined", "peer")
#: Per configured pair, setting and measure (of a group, an attribute or the run): mean a - b and its interval
EXPOSURE_PAIR_COLUMNS = (
    "model_a",
    "model_b",
    SETTING,
    ATTRIBUTE,
    GROUP,
    "measure",
    "n_queries",
    "difference",
    "ci_low",
    "ci_high",
)

# --- paired comparisons of a setting's models (posir.metrics.significance) ---------------------------

MODEL_A, MODEL_B = "model_a", "model_b"
MEAN_DIFFERENCE, RANDOMISATION_P_HOLM = "mean_difference", "randomisation_p_holm"
#: Per (bucket, model pair): the paired randomisation test and t-test of per-query nDCG@10, Holm-corrected.
SIGNIFICANCE_COLUMNS = (
    BUCKET,
    MODEL_A,
    MODEL_B,
    N_QUERIES,
    "mean_a",
    "mean_b",
    MEAN_DIFFERENCE,
    "randomisation_p",
    RANDOMISATION_P_HOLM,
    "t_statistic",
    "ttest_p",
    "ttest_p_holm",
    "significant",
    N_RESAMPLES,
    ALPHA,
)


def paired_columns(column: str) -> tuple[str, ...]:
    """A statistic of both models of a pair, their difference (a - b) with its interval, the share of resamples in
    which both are defined and in which a's is higher."""
    difference = suffixed(column, DIFFERENCE)
    return (
        suffixed(column, "a"),
        suffixed(column, "b"),
        *with_interval(difference),
        suffixed(column, "defined_share"),
        suffixed(column, "share_a_higher"),
    )


PSI_DIFFERENCE = suffixed(PSI, DIFFERENCE)
#: Per (bucket, model pair): paired bootstrap intervals of the PSI and bucket nDCG@10 differences.
PSI_DIFFERENCE_COLUMNS = (
    BUCKET,
    MODEL_A,
    MODEL_B,
    N_QUERIES,
    *paired_columns(PSI),
    *paired_columns(BIN_MEAN),
    N_RESAMPLES,
    CONFIDENCE,
    INTERVAL,
)

# --- paper tables (PosIR Tables 2-3) --------------------------------------------------------------

SOURCE = "source"  # a benchmark of ours or a published result set
KIND = "kind"  # MONOLINGUAL or CROSS_LINGUAL: which of a model's means a setting enters
#: Whether PSI left out bins holding fewer than the minimum queries; NA where the source does not say.
PSI_LOW_BINS = "psi_low_bins"
N_SETTINGS, SETTINGS, MISSING_SETTINGS = "n_settings", "settings", "missing_settings"
PCT = POSITION_MEASURE.of("pct")  # nDCG@10 in percent, as the paper prints it
REFERENCE = "reference"  # the model's score on the reference benchmark (MMTEB in PosIR Table 2)
ROW, MODEL_ROW, AVERAGE_ROW = "row", "model", "average"  # Table 3: a model's row, or a source's Average row
AVERAGE_MODEL = "Average"  # the model column of an Average row


def psi_flag_columns(buckets: Sequence[str]) -> tuple[str, ...]:
    """PSI_LOW_BINS overall and per bucket."""
    return PSI_LOW_BINS, *bucket_columns(PSI_LOW_BINS, buckets)


def settings_columns(buckets: Sequence[str]) -> tuple[str, ...]:
    """Per-setting rows of every source: its source and kind, the main-table columns, the PSI flags."""
    main = main_columns(buckets)
    return (SOURCE, *ID_COLUMNS, KIND, *main[len(ID_COLUMNS) :], *psi_flag_columns(buckets))


def macro_mean_columns(buckets: Sequence[str]) -> tuple[str, ...]:
    """Per (source, model): how many and which settings were averaged, the means, the flags of any setting."""
    return (
        SOURCE,
        MODEL,
        N_SETTINGS,
        SETTINGS,
        MISSING_SETTINGS,
        *headline_columns(buckets),
        *psi_flag_columns(buckets),
        LANGUAGES_OUTSIDE_MODEL,
    )


def ranking_columns(buckets: Sequence[str]) -> tuple[str, ...]:
    """PosIR Table 2: per model, its reference score and nDCG@10 in percent overall and per bucket."""
    return (
        SOURCE,
        MODEL,
        N_SETTINGS,
        MISSING_SETTINGS,
        LANGUAGES_OUTSIDE_MODEL,
        REFERENCE,
        PCT,
        *bucket_columns(PCT, buckets),
    )


SCORE_COLUMN, RHO, N_MODELS = "score_column", "rho", "n_models"
#: PosIR Table 2's last rows: per score column (its display name first), Spearman's rho with the reference.
CORRELATION_COLUMNS = ("column", SCORE_COLUMN, RHO, P_VALUE, N_MODELS)


def position_bias_columns(buckets: Sequence[str]) -> tuple[str, ...]:
    """PosIR Table 3: per kind, model rows then an Average row per source; nDCG@10 in percent, PSI per bucket."""
    return (
        KIND,
        ROW,
        SOURCE,
        MODEL,
        N_SETTINGS,
        MISSING_SETTINGS,
        LANGUAGES_OUTSIDE_MODEL,
        PCT,
        *bucket_columns(PSI, buckets),
        *bucket_columns(PSI_LOW_BINS, buckets),
    )


# --- translations of one source side by side (posir.steps.translation) --------------------------------

TRANSLATION, BENCHMARK, BACKEND = "translation", "benchmark", "backend"
DOCUMENTS_KEPT, DOCUMENTS_SOURCE = "documents_kept", "documents_source"


def delta(column: str) -> str:
    """The difference of ``column`` to the reference translation's row of the same run."""
    return f"delta_{column}"


def comparison_columns(buckets: Sequence[str]) -> tuple[str, ...]:
    """One row per (translation, model, setting): nDCG@10 and PSI overall and per bucket, kept documents, deltas."""
    return (
        TRANSLATION,
        BENCHMARK,
        BACKEND,
        *ID_COLUMNS,
        N_QUERIES,
        DOCUMENTS_KEPT,
        DOCUMENTS_SOURCE,
        NDCG,
        *bucket_columns(NDCG, buckets),
        delta(NDCG),
        PSI,
        *bucket_columns(PSI, buckets),
        delta(PSI),
        LANGUAGES_OUTSIDE_MODEL,
    )


# --- analyses: saliency by token position (PosIR section 5.3), segment similarity (Zeng et al. A.4) ----

MEAN, STD = "mean", "std"
#: Per (query, positive) pair: what the model saw, and the evidence's token span; one column per relative token
#: bin follows (posir.analyses.saliency.bin_columns).
SALIENCY_PAIR_COLUMNS = (
    QID,
    DOC_ID,
    "n_seen_tokens",
    "n_document_tokens",
    "seen_fraction",
    "similarity",
    "evidence_start",
    "evidence_end",
    "from_cache",
)
BIN_CENTRE, N_PAIRS = "bin_centre", "n_pairs"
#: Per relative token bin: mean max-normalised saliency over pairs with its t-interval.
SALIENCY_CURVE_COLUMNS = (POSITION_BIN, BIN_START, BIN_END, BIN_CENTRE, N_PAIRS, MEAN, STD, CI_LOW, CI_HIGH)
SEGMENT, COSINE = "segment", "cosine"
#: Per (document, segment): cosine of the document's embedding with its segment's.
SEGMENT_COLUMNS = (DOC_ID, LENGTH_BUCKET, SEGMENT, "segment_chars", COSINE)
N_DOCUMENTS, MEAN_COSINE = "n_documents", "mean_cosine"
#: Per (bucket or ALL, segment): mean cosine over documents with its t-interval.
N_LEFT_OUT = "n_documents_left_out"  # documents of the bucket too short for the segments: counted, never silent
SEGMENT_SUMMARY_COLUMNS = (BUCKET, SEGMENT, N_DOCUMENTS, MEAN_COSINE, STD, CI_LOW, CI_HIGH, N_LEFT_OUT)

# --- paths: where every result lives ---------------------------------------------------------------
#
# Called with wildcard placeholders (``run("{benchmark}", "{model}", "{setting}")``) ResultPaths gives the
# patterns rules declare as outputs; called with values, the files the plan asks for as inputs. Both come from
# here, so a rule's output and the input that waits for it cannot drift apart.

#: The per-run files of a score_run job (scores, aggregates, trend, the position figure), by output name.
AGGREGATES = ("bins", "summary", "bootstrap", "bootstrap_bins", "trend")
#: MTEB's revision folder for weights with no Hub revision we can name, and our task names' prefix there
MTEB_NO_REVISION = "no_revision_available"
MTEB_TASK_PREFIX = "posir-"
#: the organisation part of our model entries' MTEB names (``posir/minilm-l6``)
MTEB_ORGANISATION = "posir"
#: The files of one paper table (PosIR Tables 2-3), by output name.
PAPER_TABLE_FILES: dict[str, str] = {
    "settings_csv": "settings.csv",
    "settings_md": "settings.md",
    "settings_tex": "settings.tex",
    "ranking_csv": "ranking.csv",
    "ranking_md": "ranking.md",
    "ranking_tex": "ranking.tex",
    "correlation_csv": "correlation.csv",
    "position_bias_csv": "position_bias.csv",
    "position_bias_md": "position_bias.md",
    "position_bias_tex": "position_bias.tex",
}
#: The stages of LLM benchmark generation, in order (each writes results/generation/<benchmark>/<stage>/).
GENERATION_STAGES = ("corpus", "sample", "queries", "spans", "contrast", "grading", "false_negatives")


def _beside(stem: str, **endings: str) -> dict[str, str]:
    """Files named by what follows a shared ``stem`` (a directory with its slash, or a path stem)."""
    return {name: stem + ending for name, ending in endings.items()}


#: A benchmark's folder of tables and grids in a rule's pattern: ``{family}`` is a controlled variant's family and a
#: slash, or empty (:meth:`ResultPaths.benchmark_folder`).
BENCHMARK_FOLDER = "{family}{benchmark}"


@dataclass(frozen=True)
class ResultPaths:
    """The result files of a workflow run, under ``root``; ``families`` maps each controlled variant to its family,
    whose folders hold the variant's tables and grids."""

    root: str = "results"
    families: Mapping[str, str] = field(default_factory=dict, hash=False)

    # --- sources, benchmarks, collections ---------------------------------------------------------------

    def source(self, name: str, filename: str) -> str:
        return f"{self.root}/sources/{name}/{filename}"

    def benchmark_dir(self, variant: str) -> str:
        return f"{self.root}/benchmarks/{variant}"

    def benchmark_file(self, variant: str, filename: str) -> str:
        """One file of a benchmark's contract (posir.benchmark: CORPUS, QUERIES, POSITIONS, ...)."""
        return f"{self.benchmark_dir(variant)}/{filename}"

    def benchmark_outputs(self, variant: str, query_only: bool = False, extra: Iterable[str] = ()) -> dict[str, str]:
        """Every file of the benchmark contract (posir.benchmark), named as rule outputs, plus ``extra`` files."""
        names = fmt.QUERY_ONLY_CONTRACT if query_only else fmt.CONTRACT
        outputs = {name: self.benchmark_file(variant, filename) for name, filename in names.items()}
        outputs.update({Path(filename).stem: self.benchmark_file(variant, filename) for filename in extra})
        return outputs

    def collection_dir(self, collection: str) -> str:
        return f"{self.root}/collections/{collection}"

    def collection_outputs(self, collection: str) -> dict[str, str]:
        return _beside(f"{self.collection_dir(collection)}/", corpus=fmt.CORPUS, drops=fmt.DROPS, card=fmt.CARD)

    def generation_stage_dir(self, benchmark: str, stage: str) -> str:
        return f"{self.root}/generation/{benchmark}/{stage}"

    def generation_file(self, benchmark: str, stage: str, filename: str) -> str:
        return f"{self.generation_stage_dir(benchmark, stage)}/{filename}"

    def generation_stage_outputs(self, benchmark: str, stage: str, files: dict[str, str]) -> dict[str, str]:
        """A generation stage's outputs: its own ``files`` (name -> file name), its drops.tsv and counts.json."""
        return _beside(f"{self.generation_stage_dir(benchmark, stage)}/", **files, drops=fmt.DROPS, counts=fmt.COUNTS)

    def translation_judge(self, variant: str) -> dict[str, str]:
        return _beside(f"{self.root}/translation/{variant}/judge", judged=".tsv", usage=".usage.json")

    # --- embeddings, runs, scores, aggregates -----------------------------------------------------------

    def embeddings(self, model: str, text_set: str, kind: str) -> str:
        return self.embedding_outputs(model, text_set, kind)["embeddings"]

    def converted_model(self, package: str) -> str:
        """The sentence-transformers folder converted from ``package``'s weights (posir.models.conversion)."""
        return f"{self.root}/models/{package}"

    def exported_model(self, model: str) -> dict[str, str]:
        """A model's graph for ``runtime: onnx | openvino`` (posir.models.runtimes) and its identity record."""
        return _beside(f"{self.root}/models/{model}", graph=".onnx", record=".json")

    def embedding_outputs(self, model: str, text_set: str, kind: str) -> dict[str, str]:
        return _beside(f"{self.root}/embeddings/{model}/{text_set}/{kind}", embeddings=".npy", ids=".ids.tsv")

    def renorm_mean(self, model: str, collection: str) -> dict[str, str]:
        return _beside(f"{self.root}/embeddings/{model}/{collection}/corpus.mean", mean=".npy", provenance=".json")

    def run(self, benchmark: str, model: str, setting: str) -> str:
        return f"{self.root}/runs/{benchmark}/{model}/{setting}.trec"

    def rerank_outputs(self, benchmark: str, model: str, setting: str) -> dict[str, str]:
        stem = f"{self.root}/runs/{benchmark}/{model}/{setting}"
        return _beside(stem, run=".trec", evaluated=".queries.tsv", card=".card.json", scores=".scores.tsv")

    def reranked_queries(self, benchmark: str, model: str, setting: str) -> str:
        return self.rerank_outputs(benchmark, model, setting)["evaluated"]

    def scores(self, benchmark: str, model: str, setting: str) -> str:
        return f"{self.root}/scores/{benchmark}/{model}/{setting}.tsv"

    def aggregate(self, benchmark: str, model: str, setting: str, suffix: str) -> str:
        return f"{self.root}/aggregates/{benchmark}/{model}/{setting}.{suffix}.tsv"

    def run_figure(self, benchmark: str, model: str, setting: str) -> str:
        return f"{self.root}/figures/{benchmark}/{model}/{setting}.png"

    def score_outputs(self, benchmark: str, model: str, setting: str) -> dict[str, str]:
        """What scoring one run writes besides its position figure: per-query scores and the aggregates."""
        return {
            "per_query": self.scores(benchmark, model, setting),
            **{suffix: self.aggregate(benchmark, model, setting, suffix) for suffix in AGGREGATES},
        }

    # --- tables, figures, analyses ----------------------------------------------------------------------

    def benchmark_folder(self, benchmark: str) -> str:
        """Where a benchmark's tables and grids sit under ``tables/`` and ``figures/``: a controlled variant's in its
        family's folder (``tables/<family>/<variant>/``), not beside it. In a rule's pattern, BENCHMARK_FOLDER
        matches both."""
        family = self.families.get(benchmark)
        return f"{family}/{benchmark}" if family else benchmark

    def table(self, benchmark: str, filename: str) -> str:
        return f"{self.root}/tables/{self.benchmark_folder(benchmark)}/{filename}"

    def benchmark_figure(self, benchmark: str, filename: str) -> str:
        """A figure of a benchmark's tables (its grids, its language bias): beside them, in its benchmark folder."""
        return f"{self.root}/figures/{self.benchmark_folder(benchmark)}/{filename}"

    def grid(self, benchmark: str, setting: str | None = None) -> str:
        """Every model's position curves on one grid: of a benchmark, or of one of its settings."""
        return self.benchmark_figure(benchmark, f"grid-{setting}.png" if setting else "grid.png")

    def figure(self, benchmark: str, filename: str) -> str:
        return f"{self.root}/figures/{benchmark}/{filename}"

    def significance(self, benchmark: str, setting: str, extension: str) -> str:
        return self.table(benchmark, f"significance/{setting}.{extension}")

    def saliency(self, benchmark: str, model: str, kind: str) -> str:
        return f"{self.root}/analyses/saliency/{benchmark}/{model}.{kind}.tsv"

    def representation(self, benchmark: str, model: str, kind: str) -> str:
        return f"{self.root}/analyses/representation/{benchmark}/{model}.{kind}.tsv"

    def published_table(self, name: str, filename: str) -> str:
        return f"{self.root}/tables/published/{name}/{filename}"

    def paper_tables(self, table: str) -> dict[str, str]:
        return {key: f"{self.root}/tables/paper/{table}/{filename}" for key, filename in PAPER_TABLE_FILES.items()}

    # --- logs and timings -------------------------------------------------------------------------------

    # --- export: MTEB's results layout (posir.mteb_results) -----------------------------------------------

    def mteb_revision_dir(self, model: str) -> str:
        """A model entry's folder in MTEB's layout (``<cache>/results/<model name, / as __>/<revision>/``) under
        ``export/mteb``, which ``mteb.ResultCache(cache_path=...)`` reads; the entry is MTEB's ``posir/<entry>``."""
        return f"{self.root}/export/mteb/results/{MTEB_ORGANISATION}__{model}/{MTEB_NO_REVISION}"

    def mteb_task_result(self, model: str, benchmark: str) -> str:
        return f"{self.mteb_revision_dir(model)}/{MTEB_TASK_PREFIX}{benchmark}.json"

    def mteb_model_meta(self, model: str) -> str:
        return f"{self.mteb_revision_dir(model)}/model_meta.json"

    def log(self, rule: str, key: str) -> str:
        return f"{self.root}/logs/{rule}/{key}.log"

    def timing(self, rule: str, key: str) -> str:
        return f"{self.root}/timing/{rule}/{key}.tsv"


# --- readers ------------------------------------------------------------------------------------

#: Columns of our TSVs that hold ids and labels, never numbers: "007" stays "007", "" stays "".
TEXT_COLUMNS = {
    QID: str,
    DOC_ID: str,
    LENGTH_BUCKET: str,
    BUCKET: str,
    PSI_BINS_SKIPPED: str,
    MODEL: str,
    SETTING: str,
    LANGUAGES_OUTSIDE_MODEL: str,
    PSI_TREND_DIRECTION: str,
}


def read_result_tsv(path: Path) -> pd.DataFrame:
    """Our result TSVs (per-query scores, aggregates): empty cells are missing numbers, ids and labels stay text."""
    import pandas as pd

    frame = pd.read_csv(path, sep="\t", keep_default_na=False, na_values=[""], dtype=TEXT_COLUMNS)
    return frame.fillna({c: "" for c in TEXT_COLUMNS if c in frame.columns})


def flag_set(value: Any) -> bool:
    """Whether a flag cell (PSI_TREND_SIGNIFICANT, PSI_LOW_BINS) is set; a missing value (NA) is not."""
    import pandas as pd

    return value is not None and not pd.isna(value) and bool(value)
