"""The names every result table shares: what a row is about (a query, a run, a bucket, a position bin) and the
statistics wrapped around any measure (counts, intervals, tests).

A measure's own columns are declared by its object (:mod:`posir.metrics.measures`); the statistics beside it
(:mod:`posir.metrics.trend`, :mod:`posir.metrics.significance`, ...) declare theirs at the top of their modules;
:mod:`posir.results.schemas` composes them into the tables the workflow writes. Every other module names a column
through one of these constants, never through a literal.
"""

from __future__ import annotations

from collections.abc import Sequence

# --- what a row is about -------------------------------------------------------------------------------------------

QID = "qid"
DOC_ID = "doc_id"
MODEL = "model"
SETTING = "setting"
#: Every table of runs starts with these: one model evaluated in one setting.
ID_COLUMNS = (MODEL, SETTING)
MODEL_A, MODEL_B = "model_a", "model_b"
LENGTH_BUCKET = "length_bucket"  # a query's length bucket, from its positive document (benchmark positions)
RELATIVE_POSITION = "relative_position"
POSITION_BIN = "position_bin"
SPAN_START, SPAN_END = "span_start", "span_end"  # the evidence span in the positive, [start, end) in characters
DOC_CHAR_LENGTH = "doc_char_length"
#: A query's own position group(s) where its source names them rather than a span (FineWeb-PosQ's span_class):
#: a positions.tsv column, several groups comma-separated (posir.metrics.groupings).
POSITION_LABEL = "position_label"
BIN_START, BIN_END = "bin_start", "bin_end"
BUCKET = "bucket"  # an aggregate row's length bucket, or ALL
ALL = "all"  # the bucket of all queries, whatever their length (queries outside every bucket included)
#: The forms of a group's queries (posir.evidence): the questions joined, an LLM's fused question, one member alone; a
#: query with several pieces that no groups table describes (a user's import) is ``several``.
JOINED, FUSED, SINGLE, SEVERAL = "joined", "fused", "single", "several"
N_QUERIES = "n_queries"
ATTRIBUTE, GROUP = "attribute", "group"  # a document attribute (length_bucket, language) and one of its values
MEASURE, CUTOFF = "measure", "cutoff"  # a row's measure, where a table holds several, and its depth

# --- statistics around a measure -----------------------------------------------------------------------------------

MEAN, STD = "mean", "std"
DIFFERENCE = "difference"
SHARE = "share"
# Bootstrap intervals (posir.metrics.resampling): ``<column>_ci_low`` etc.
CI_LOW, CI_HIGH, BOOTSTRAP_BIAS = "ci_low", "ci_high", "bootstrap_bias"
INTERVAL_SUFFIXES = (f"_{CI_LOW}", f"_{CI_HIGH}", f"_{BOOTSTRAP_BIAS}")
N_RESAMPLES, CONFIDENCE, INTERVAL = "n_resamples", "confidence", "interval"
ALPHA, P_VALUE = "alpha", "p_value"


def suffixed(column: str, suffix: str) -> str:
    """A column derived from another: ``suffixed("psi", "Q1")`` is ``psi_Q1``, ``suffixed("ndcg@10", CI_LOW)``
    ``ndcg@10_ci_low``."""
    return f"{column}_{suffix}"


def bucket_columns(column: str, buckets: Sequence[str]) -> list[str]:
    """A wide table's per-bucket columns of ``column``, in bucket order: ``psi_Q1``, ``psi_Q2``, ..."""
    return [suffixed(column, bucket) for bucket in buckets]


def with_interval(column: str) -> tuple[str, str, str, str]:
    """A bootstrapped statistic and its interval: the point value, ``_ci_low``, ``_ci_high``, ``_bootstrap_bias``."""
    return column, suffixed(column, CI_LOW), suffixed(column, CI_HIGH), suffixed(column, BOOTSTRAP_BIAS)
