"""The columns of every result table, composed from what the measures and statistics declare.

Every evaluated run (a model on one benchmark and setting) writes the same files: its per-query scores, and its
aggregates (PosIR section 5.2) -- the mean nDCG@10 per length bucket and relative position bin (``bins``), per
bucket both bucket means and PSI (``summary``), their bootstrap intervals (``bootstrap``, ``bootstrap_bins``) and
the position-trend tests (``trend``). The tables built from them (:mod:`posir.tables.build`) stack or widen those
columns: the main, long, trends and languages tables (PosIR Tables 10-11), the paired significance and
PSI-difference tables, the paper tables (PosIR Tables 2-3), the comparison of translations, the language bias of
one-vs-many runs (Multi-EuP), exposure by document group and the analyses' tables (PosIR section 5.3, Zeng et al.
Appendix A.4).

A measure's columns come from its object (:mod:`posir.metrics.measures`), a statistic's from the module that
computes it (:mod:`posir.metrics.trend`, :mod:`posir.metrics.significance`, ...); this module names only what the
tables add around them, and the order of each table's columns.
"""

from __future__ import annotations

from collections.abc import Sequence

from posir.metrics import aggregate, group_scores, trend
from posir.metrics.columns import (
    ATTRIBUTE,
    BIN_END,
    BIN_START,
    BUCKET,
    CI_HIGH,
    CI_LOW,
    CONFIDENCE,
    CUTOFF,
    DIFFERENCE,
    DOC_CHAR_LENGTH,
    DOC_ID,
    GROUP,
    ID_COLUMNS,
    INTERVAL,
    LENGTH_BUCKET,
    MEAN,
    MEASURE,
    MODEL,
    MODEL_A,
    MODEL_B,
    N_QUERIES,
    N_RESAMPLES,
    POSITION_BIN,
    QID,
    RELATIVE_POSITION,
    SETTING,
    SHARE,
    SPAN_END,
    SPAN_START,
    STD,
    bucket_columns,
    suffixed,
    with_interval,
)
from posir.metrics.exposure import CORPUS_SHARE, RELEVANT_SHARE
from posir.metrics.measure import ATTRIBUTE_SCOPE, EXPOSURE_TABLE, GROUP_SCOPE, RUN_SCOPE, GroupMeasure, RankingMeasure
from posir.metrics.measures import PER_QUERY, POSITION_MEASURE
from posir.metrics.measures.evidence_share import EvidenceShare
from posir.metrics.measures.peer import PEER
from posir.metrics.measures.psi import PositionSensitivity

# --- the position measure's columns ---------------------------------------------------------------------------------

POSITION = PositionSensitivity(of=POSITION_MEASURE)
#: The position measure's column: nDCG@10 per query and per bin, over all queries in the main table.
NDCG = POSITION_MEASURE.column
#: A bucket's nDCG@10 as PosIR reports it, the mean of its non-empty bin means (PosIR section 5.2) ...
BIN_MEAN = POSITION.bin_mean
#: ... and the plain mean over its queries, reported beside it.
QUERY_MEAN = POSITION.query_mean
#: The Position Sensitivity Index: 1 - min/max of the bin means (Zeng et al., section 3.3).
PSI = POSITION.column
PSI_BINS_USED = POSITION.bins_used  # bins holding at least metrics.min_bin_queries queries
PSI_BINS_SKIPPED = POSITION.bins_skipped  # non-empty bins below it, comma-separated
PSI_DEFINED_SHARE = POSITION.defined_share  # the share of resamples in which PSI is defined
#: Languages of a run's setting that its model does not declare (posir.config.languages_outside_model).
LANGUAGES_OUTSIDE_MODEL = "languages_outside_model"

# --- per-query scores (posir.steps.evaluation.score_run) ------------------------------------------------------------

DOC_TOKEN_LENGTH = "doc_token_length"
#: A query's positive and the position of its evidence (posir.benchmark.POSITION_FIELDS, less the qid).
POSITION_FIELDS = (
    DOC_ID,
    DOC_TOKEN_LENGTH,
    LENGTH_BUCKET,
    RELATIVE_POSITION,
    POSITION_BIN,
    SPAN_START,
    SPAN_END,
    DOC_CHAR_LENGTH,
)
DOC_INPUT_TOKENS = "doc_input_tokens"  # token positions the model processed for the document, summed over windows


def score_columns(measures: Sequence[RankingMeasure] = PER_QUERY) -> tuple[str, ...]:
    """One row per evaluated query: its measures (``metrics.measures``), then its positive's position; any further
    position field of the benchmark (``own_relative_position``) follows, and, for a dense model, DOC_INPUT_TOKENS."""
    return (QID, *(measure.column for measure in measures), *POSITION_FIELDS)


SCORE_COLUMNS = score_columns()

# --- a run's aggregates (posir.metrics.aggregate, posir.metrics.bootstrap, posir.metrics.trend) --------------------

BINS_COLUMNS = aggregate.BINS_COLUMNS
BUCKET_STATISTICS = aggregate.BUCKET_STATISTICS
#: A run's summary file: the bucket statistics, the languages outside the model, and (with ``metrics.statistics``)
#: whether each PSI rests on a significant position trend.
SUMMARY_COLUMNS = (*BUCKET_STATISTICS, LANGUAGES_OUTSIDE_MODEL, *trend.PSI_TREND_COLUMNS)
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
TREND_COLUMNS = trend.TREND_COLUMNS

#: Every file of an evaluated run, by the name the workflow gives its output, with its columns (the per-query
#: table's leading ones). posir.results.paths.ResultPaths.score_outputs says where each lies.
RUN_TABLES: dict[str, tuple[str, ...]] = {
    "per_query": SCORE_COLUMNS,
    "bins": BINS_COLUMNS,
    "summary": SUMMARY_COLUMNS,
    "bootstrap": BOOTSTRAP_COLUMNS,
    "bootstrap_bins": BOOTSTRAP_BINS_COLUMNS,
    "trend": TREND_COLUMNS,
}

# --- a benchmark's tables: main, long, trends, languages (PosIR Tables 10-11), language bias ------------------------

PSI_TREND = suffixed(PSI, "trend")  # main table: the direction of a significant trend ("primacy", "recency") or ""
N_QUERIES_OUTSIDE_BUCKETS = "n_queries_outside_buckets"  # counted overall and in no bucket


def main_columns(buckets: Sequence[str]) -> tuple[str, ...]:
    """The main table, one row per run: nDCG@10 overall (query mean) and per bucket (bin mean), PSI overall and per
    bucket, the buckets' query means and counts, each PSI's significant trend and its p-value, the flags."""
    trends: list[str] = []
    for suffix in ("", *(f"_{b}" for b in buckets)):
        trends += [PSI_TREND + suffix, trend.PSI_TREND_P + suffix]
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


#: Per (model, query language, document language): the document language's share of the top results.
LANGUAGE_BIAS_COLUMNS = (MODEL, QUERY_LANGUAGE, DOCUMENT_LANGUAGE, SHARE)

# --- paper tables (PosIR Tables 2-3) ------------------------------------------------------------------------------

SOURCE = "source"  # a benchmark of ours or a published result set
KIND = "kind"  # MONOLINGUAL or CROSS_LINGUAL: which of a model's means a setting enters
#: Whether PSI left out bins holding fewer than the minimum queries; NA where the source does not say.
PSI_LOW_BINS = suffixed(PSI, "low_bins")
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


# --- translations of one source side by side (posir.steps.translation) ---------------------------------------------

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


# --- analyses: saliency by token position (PosIR section 5.3), segment similarity (Zeng et al. A.4) ----------------

N_SEEN_TOKENS, N_DOCUMENT_TOKENS, SEEN_FRACTION = "n_seen_tokens", "n_document_tokens", "seen_fraction"
SIMILARITY, EVIDENCE_START, EVIDENCE_END, FROM_CACHE = "similarity", "evidence_start", "evidence_end", "from_cache"
#: Per (query, positive) pair: what the model saw, and the evidence's token span; one column per relative token
#: bin follows (posir.analyses.saliency.bin_columns).
SALIENCY_PAIR_COLUMNS = (
    QID,
    DOC_ID,
    N_SEEN_TOKENS,
    N_DOCUMENT_TOKENS,
    SEEN_FRACTION,
    SIMILARITY,
    EVIDENCE_START,
    EVIDENCE_END,
    FROM_CACHE,
)
BIN_CENTRE, N_PAIRS = "bin_centre", "n_pairs"
#: Per relative token bin: mean max-normalised saliency over pairs with its t-interval.
SALIENCY_CURVE_COLUMNS = (POSITION_BIN, BIN_START, BIN_END, BIN_CENTRE, N_PAIRS, MEAN, STD, CI_LOW, CI_HIGH)
SEGMENT, COSINE, SEGMENT_CHARS = "segment", "cosine", "segment_chars"
#: Per (document, segment): cosine of the document's embedding with its segment's.
SEGMENT_COLUMNS = (DOC_ID, LENGTH_BUCKET, SEGMENT, SEGMENT_CHARS, COSINE)
N_DOCUMENTS, MEAN_COSINE = "n_documents", "mean_cosine"
N_LEFT_OUT = "n_documents_left_out"  # documents of the bucket too short for the segments: counted, never silent
#: Per (bucket or ALL, segment): mean cosine over documents with its t-interval.
SEGMENT_SUMMARY_COLUMNS = (BUCKET, SEGMENT, N_DOCUMENTS, MEAN_COSINE, STD, CI_LOW, CI_HIGH, N_LEFT_OUT)

# --- who gets seen: exposure by document group (posir.metrics.exposure, posir.tables.exposure) ---------------------

#: the order of the exposure table's measure columns: the most particular first
SCOPES = (GROUP_SCOPE, ATTRIBUTE_SCOPE, RUN_SCOPE)


def exposure_columns(measures: Sequence[GroupMeasure]) -> tuple[str, ...]:
    """Per (model, setting, attribute, group): the group's share of the corpus and of the relevant documents, then
    the measures' means over queries: the group's own (shares at each depth), the attribute's (AWRF) and the run's
    (expected exposure), the same on every group row of an attribute or a run. PEER has a table of its own."""
    tabled = [m for m in measures if m.table == EXPOSURE_TABLE]
    ordered = sorted(tabled, key=lambda m: SCOPES.index(m.scope))
    return (
        MODEL,
        SETTING,
        ATTRIBUTE,
        GROUP,
        N_QUERIES,
        CORPUS_SHARE,
        RELEVANT_SHARE,
        *(column for measure in ordered for column in measure.columns),
    )


N_UNDEFINED = "n_undefined"


def peer_columns(peer: PEER) -> tuple[str, ...]:
    """Per (model, setting, attribute): PEER's cutoff, the queries it is defined for and those it is not (0/0), its
    mean, and per grade the mean p-value."""
    return (
        MODEL,
        SETTING,
        ATTRIBUTE,
        CUTOFF,
        N_QUERIES,
        N_UNDEFINED,
        peer.column,
        *(peer.grade_column(grade) for grade in peer.weights),
    )


#: Per configured pair, setting and measure (of a group, an attribute or the run): mean a - b and its interval
EXPOSURE_PAIR_COLUMNS = (MODEL_A, MODEL_B, SETTING, ATTRIBUTE, GROUP, MEASURE, N_QUERIES, DIFFERENCE, CI_LOW, CI_HIGH)

# --- where the score comes from: multi-vector and sparse entries (posir.analyses.score_origin) ---------------------

MODEL_OUTPUT = "model_output"  # the entry's output: multi-vector or sparse
POSITIVE_SCORE = "positive_score"  # the entry's score for the query's positive (its best row)
EVIDENCE_SHARE = EvidenceShare().column  # the share of that score whose winning tokens overlap the evidence span
OUTSIDE_TEXT_SHARE = "outside_text_share"  # the share won by tokens outside the text ([CLS], [SEP], markers)
ORIGIN_POSITION = "origin_position"  # the share-weighted mean relative position of the winning text tokens
#: the evidence span's share of the document's characters: what the evidence share would be if every character of
#: the document carried the score alike
EVIDENCE_FRACTION = "evidence_fraction"
#: Per query: its positive's evidence bin and bucket, the score and where it comes from.
SCORE_ORIGIN_QUERY_COLUMNS = (
    MODEL,
    SETTING,
    QID,
    DOC_ID,
    RELATIVE_POSITION,
    POSITION_BIN,
    LENGTH_BUCKET,
    EVIDENCE_FRACTION,
    POSITIVE_SCORE,
    EVIDENCE_SHARE,
    OUTSIDE_TEXT_SHARE,
    ORIGIN_POSITION,
)
#: Per run, bucket (or ALL) and position bin (results/tables/<benchmark>/score_origin.csv): the mean evidence share
#: over the queries where it is defined, with its bootstrap interval, and the mean origin position.
SCORE_ORIGIN_BIN_COLUMNS = (
    MODEL,
    SETTING,
    BUCKET,
    POSITION_BIN,
    BIN_START,
    BIN_END,
    N_QUERIES,
    *with_interval(EVIDENCE_SHARE),
    ORIGIN_POSITION,
)
#: Per run and bucket (or ALL): the same over the bucket, the queries whose share is undefined (a score of 0).
SCORE_ORIGIN_SUMMARY_COLUMNS = (
    MODEL,
    SETTING,
    MODEL_OUTPUT,
    BUCKET,
    N_QUERIES,
    N_UNDEFINED,
    EVIDENCE_FRACTION,
    *with_interval(EVIDENCE_SHARE),
    OUTSIDE_TEXT_SHARE,
    ORIGIN_POSITION,
)

# --- position groups (posir.metrics.group_scores, posir.tables.position_groups) -----------------------------------

#: A benchmark's position-group table (results/tables/<benchmark>/position_groups.csv), Zeng et al.'s Table 1 in
#: long form: per run (ours, or a published row and its SOURCE) and position group, the group's query count, nDCG@10
#: and interval, then the run's PSI over the groups with its interval, the trend over the ordered groups and the
#: queries in no group (published rows fill the group's nDCG@10 and PSI only).
POSITION_GROUPS_COLUMNS = (MODEL, SETTING, SOURCE, *group_scores.GROUP_COLUMNS, *group_scores.RUN_GROUP_COLUMNS)
#: The SOURCE of our own runs' rows in it (a published row names its table).
OWN_RUNS = "this workflow"
