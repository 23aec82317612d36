"""Benchmark builders: one module per way of making a benchmark, and their registry.

A benchmark entry of ``config.yaml`` names its builder; :data:`BUILDERS` says
what each builder makes (one benchmark or one variant per language; whether a
variant holds its own corpus) and which rule writes it. The config schema's
``builder`` enum is tested against this registry, so a builder is added here,
in the schema and in one rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pydantic import Field

from posir.metrics.groupings import PositionGrouping, RelativeBins
from posir.schema import Entry, Int, NamedEntry, PositiveInt, Str


@dataclass(frozen=True)
class Builder:
    """What a builder makes, as the workflow needs to know it."""

    name: str
    rule: str  # the rule that writes its benchmark (or each language variant)
    per_language: bool = False  # one variant <name>-<lang> per language, not one benchmark
    query_only: bool = False  # its variants hold queries only: the corpus is ``corpus_from``'s
    spanless: bool = False  # its queries' positions are group labels, without evidence spans
    summary: str = ""


SQUAD = Builder(
    "squad_long_documents",
    "build_benchmark",
    summary="long documents from SQuAD-format QA data with PosIR's length-aware sampling",
)
CROSS_LINGUAL = Builder(
    "xquad_cross_lingual",
    "build_cross_lingual_variant",
    per_language=True,
    query_only=True,
    summary="XQuAD questions in each language against another benchmark's English documents",
)
PARALLEL = Builder(
    "xquad_parallel",
    "build_parallel_variant",
    per_language=True,
    summary="each language's own XQuAD paragraphs under one partition (parallel documents)",
)
GENERATION = Builder(
    "llm_generation",
    "assemble_generated_benchmark",
    summary="LLM-generated queries and spans over a raw corpus with quality control (PosIR 3)",
)
POSIR_IMPORT = Builder(
    "posir_import", "import_posir_benchmark", summary="a subset of PosIR's published parquet release"
)
TRANSLATION = Builder(
    "translation",
    "translate_benchmark",
    per_language=True,
    summary="another benchmark translated into each target language (PosIR 3.4)",
)

CONTROLLED = Builder(
    "controlled",
    "build_controlled_variant",
    summary="controlled-position variants of another benchmark: each query at every position",
)

PAIRS = Builder(
    "evidence_pairs",
    "build_evidence_pairs",
    summary="queries resting on several paragraphs: questions of one document joined, each also kept alone",
)
PARAGRAPHS = Builder(
    "squad_paragraphs",
    "build_paragraph_benchmark",
    summary="every distinct SQuAD paragraph a document, every answerable question a query (Zeng et al.'s SQuAD-PosQ)",
)
POSQ_IMPORT = Builder(
    "posq_import",
    "import_posq_benchmark",
    spanless=True,
    summary="FineWeb-PosQ's published rows: queries whose position is a group label (Zeng et al. 3.2)",
)

BUILDERS: dict[str, Builder] = {
    b.name: b
    for b in (
        SQUAD,
        CROSS_LINGUAL,
        PARALLEL,
        GENERATION,
        POSIR_IMPORT,
        TRANSLATION,
        CONTROLLED,
        PAIRS,
        PARAGRAPHS,
        POSQ_IMPORT,
    )
}


class BuilderParams(Entry):
    """What every builder's ``params`` holds: the seed and an optional query sample for quick runs."""

    seed: Int = 13
    max_queries: PositiveInt | None = None
    """keep a seeded sample of this many queries (a quick run); null keeps all"""


class BenchmarkSpec(NamedEntry):
    """What every ``benchmarks.<name>`` entry has; each builder's entry adds its own keys."""

    section: ClassVar[str] = "benchmarks"

    builder: str
    """the builder that makes it: one of BUILDERS"""
    provenance: Str | None = None
    """how the texts were made (e.g. machine-translated); copied into the dataset card"""
    notes: tuple[Str, ...] = ()
    # Read by the position-group tables, never by a build: kept out of the build's params (exclude), so changing
    # them rebuilds no benchmark.
    positions: PositionGrouping = Field(default_factory=RelativeBins, exclude=True)
    """how the position-group table groups the queries (posir.metrics.groupings): relative_bins (PosIR, the default),
    start_offset (edges, closed), thirds, or label (the source's own groups)"""
    published_rows: dict[Str, Str] = Field(default_factory=dict, exclude=True)
    """published rows shown beside ours in the position-group table: a bundled table (zeng2025-table1) or a TSV file
    -> the dataset of it whose groups are this benchmark's (SQuAD-PosQ)"""
    top_k: PositiveInt | None = Field(None, exclude=True)
    """how many documents each query's runs keep (a benchmark scored at the depth its paper used: Zeng et al.'s
    top 100); null: ``retrieval.top_k``. Read by the search, never by a build"""

    @property
    def kind(self) -> Builder:
        """What the builder makes, as the workflow needs to know it."""
        return BUILDERS[self.builder]

    @property
    def query_languages(self) -> list[str]:
        """The languages the benchmark has queries in (ISO 639-3)."""
        return [getattr(self, "language", "eng")]
