"""Where every result file lives: :class:`ResultPaths`, one method per kind of file, used by the plan for rule
outputs and job inputs alike.

Called with wildcard placeholders (``run("{benchmark}", "{model}", "{setting}")``) ResultPaths gives the patterns
rules declare as outputs; called with values, the files the plan asks for as inputs. Both come from here, so a
rule's output and the input that waits for it cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from posir import benchmark as fmt

#: A run's aggregate files, by suffix: those its own job writes (retrieve, score_run: :data:`SCORED`, beside its
#: per-query scores) and those its benchmark's analysis job writes (:data:`ANALYSED`, beside its position figure).
SCORED = ("bins", "bootstrap", "bootstrap_bins")
#: output name of the analysis rule -> suffix
ANALYSED = {"summaries": "summary", "trends": "trend"}
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
#: Each generation stage's own files, by output name (beside its drops.tsv and counts.json).
GENERATION_FILES: dict[str, dict[str, str]] = {
    "corpus": {"documents": "documents.jsonl"},
    "sample": {"documents": "documents.jsonl"},
    "queries": {"candidates": "candidates.jsonl"},
    "spans": {"located": "located.jsonl"},
    "contrast": {"kept": "kept.jsonl", "scores": "scores.tsv"},
    "grading": {"kept": "kept.jsonl", "grades": "grades.tsv"},
    "false_negatives": {"kept": "kept.jsonl", "removed": "removed_documents.tsv"},
}


@dataclass(frozen=True)
class TableFiles:
    """What one job writes of a benchmark's (or family's) tables and figures: file names by output name, the names
    its rule gives its outputs and the plan asks for. Every table and figure file name of the workflow is one of
    these (:meth:`ResultPaths.outputs`)."""

    tables: Mapping[str, str]
    figures: Mapping[str, str] = field(default_factory=dict)


MAIN_TABLE = TableFiles(
    {"csv": "main.csv", "markdown": "main.md", "long": "main_long.csv", "trends": "trends.csv",
     "trends_markdown": "trends.md"}
)  # fmt: skip
LANGUAGES_TABLE = TableFiles({"csv": "languages.csv", "markdown": "languages.md"})
EXPOSURE_TABLES = TableFiles(
    {"exposure_csv": "exposure.csv", "exposure_markdown": "exposure.md", "peer_csv": "peer.csv",
     "peer_markdown": "peer.md", "pairs_csv": "exposure_pairs.csv", "pairs_markdown": "exposure_pairs.md"},
    {"figure": "exposure.png"},
)  # fmt: skip
LANGUAGE_BIAS_TABLE = TableFiles(
    {"csv": "language_bias.csv", "markdown": "language_bias.md"}, {"figure": "language_bias.png"}
)
SCORE_ORIGIN_TABLE = TableFiles(
    {"csv": "score_origin.csv", "markdown": "score_origin.md"}, {"figure": "score_origin.png"}
)
POOLING_TABLES = TableFiles({"csv": "pooling.csv", "markdown": "pooling.md", "unpaired": "pooling_unpaired.csv"})
TRANSLATION_JUDGE_TABLE = TableFiles({"csv": "translation_judge.csv", "markdown": "translation_judge.md"})
TRANSLATION_COMPARISON_TABLE = TableFiles(
    {"csv": "translation_comparison.csv", "markdown": "translation_comparison.md"}
)
#: A controlled family's tables and figures (posir.metrics.controlled).
CONTROLLED_TABLES = TableFiles(
    {"tests_csv": "controlled.csv", "tests_md": "controlled.md", "positions_csv": "controlled_positions.csv",
     "comparison_csv": "natural_vs_controlled.csv", "comparison_md": "natural_vs_controlled.md"},
    {"curves": "controlled.png", "heatmap": "controlled_heatmap.png"},
)  # fmt: skip
#: A spread family's tables and figure (posir.metrics.distance).
DISTANCE_TABLES = TableFiles(
    {"cells_csv": "distance.csv", "cells_md": "distance.md", "tests_csv": "distance_tests.csv",
     "levels_csv": "distance_levels.csv", "single_csv": "distance_single.csv", "tokens_csv": "distance_tokens.csv",
     "shares_csv": "distance_score_shares.csv"},
    {"figure": "distance.png"},
)  # fmt: skip
#: A published result's main table (posir.published), and a benchmark's position groups (Zeng et al.'s Table 1).
PUBLISHED_TABLE = TableFiles({"csv": "main.csv", "markdown": "main.md"})
POSITION_GROUPS_TABLE = TableFiles(
    {"csv": "position_groups.csv", "markdown": "position_groups.md", "latex": "position_groups.tex"},
    {"figure": "position_groups.png"},
)
#: A setting's paired tests (posir.metrics.significance) by output name: the file's ending after the setting.
SIGNIFICANCE_FILES = {"tests": "csv", "psi": "psi.csv", "markdown": "md", "latex": "tex"}


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

    def relative(self, path: str) -> str:
        """One of these files named from ``root``, as a document names it: ``tables/squad-long/main.csv``."""
        return PurePosixPath(path).relative_to(self.root).as_posix()

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

    def generation_file(self, benchmark: str, stage: str, output: str) -> str:
        """One of a generation stage's own files, by output name (:data:`GENERATION_FILES`)."""
        return f"{self.generation_stage_dir(benchmark, stage)}/{GENERATION_FILES[stage][output]}"

    def generation_stage_outputs(
        self, benchmark: str, stage: str, files: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        """A generation stage's outputs: its own files (:data:`GENERATION_FILES`, or ``files``: output name -> file
        name, for a stage of its own), its drops.tsv and counts.json."""
        own = GENERATION_FILES[stage] if files is None else files
        return _beside(f"{self.generation_stage_dir(benchmark, stage)}/", **own, drops=fmt.DROPS, counts=fmt.COUNTS)

    def translation_judge(self, variant: str) -> dict[str, str]:
        return _beside(f"{self.root}/translation/{variant}/judge", judged=".tsv", usage=".usage.json")

    # --- embeddings, runs, scores, aggregates -----------------------------------------------------------

    def embeddings(self, model: str, text_set: str, kind: str) -> str:
        return self.embedding_outputs(model, text_set, kind)["embeddings"]

    def converted_model(self, package: str) -> str:
        """The sentence-transformers folder converted from ``package``'s weights (posir.models.weights.conversion)."""
        return f"{self.root}/models/{package}"

    def exported_model(self, model: str) -> dict[str, str]:
        """A model's graph for ``runtime: onnx | openvino`` (posir.models.weights.runtimes) and its identity record."""
        return _beside(f"{self.root}/models/{model}", graph=".onnx", record=".json")

    def embedding_outputs(self, model: str, text_set: str, kind: str) -> dict[str, str]:
        return _beside(f"{self.root}/embeddings/{model}/{text_set}/{kind}", embeddings=".npy", ids=".ids.tsv")

    def token_vector_outputs(self, model: str, text_set: str, kind: str) -> dict[str, str]:
        """A multi-vector entry's text set: token vectors, their records, the rows (docs/late-interaction.md)."""
        return _beside(
            f"{self.root}/embeddings/{model}/{text_set}/{kind}",
            vectors=".tokens.npy",
            tokens=".tokens.spans.npy",
            rows=".tokens.rows.tsv",
        )

    def sparse_vector_outputs(self, model: str, text_set: str, kind: str) -> dict[str, str]:
        """A sparse entry's text set: its term records and the rows (docs/late-interaction.md)."""
        return _beside(
            f"{self.root}/embeddings/{model}/{text_set}/{kind}", terms=".sparse.npy", rows=".sparse.rows.tsv"
        )

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
        """What scoring one run writes: per-query scores, bins and their intervals (the rest is its benchmark's
        analysis: :data:`ANALYSED` and the run's position figure)."""
        return {
            "per_query": self.scores(benchmark, model, setting),
            **{suffix: self.aggregate(benchmark, model, setting, suffix) for suffix in SCORED},
        }

    # --- tables, figures, analyses ----------------------------------------------------------------------

    def benchmark_folder(self, benchmark: str) -> str:
        """Where a benchmark's tables and grids sit under ``tables/`` and ``figures/``: a controlled variant's in its
        family's folder (``tables/<family>/<variant>/``), not beside it. In a rule's pattern, BENCHMARK_FOLDER
        matches both."""
        family = self.families.get(benchmark)
        return f"{family}/{benchmark}" if family else benchmark

    def tables_dir(self) -> str:
        """Every benchmark's tables (and the paper's, the published results')."""
        return f"{self.root}/tables"

    def table(self, benchmark: str, filename: str) -> str:
        return f"{self.root}/tables/{self.benchmark_folder(benchmark)}/{filename}"

    def benchmark_figure(self, benchmark: str, filename: str) -> str:
        """A figure of a benchmark's tables (its grids, its language bias): beside them, in its benchmark folder."""
        return f"{self.root}/figures/{self.benchmark_folder(benchmark)}/{filename}"

    def grid(self, benchmark: str, setting: str | None = None) -> str:
        """Every model's position curves on one grid: of a benchmark, or of one of its settings."""
        return self.benchmark_figure(benchmark, f"grid-{setting}.png" if setting else "grid.png")

    def outputs(self, benchmark: str, files: TableFiles) -> dict[str, str]:
        """One job's tables and figures of ``benchmark`` (or a family), by output name."""
        return {
            **{name: self.table(benchmark, filename) for name, filename in files.tables.items()},
            **{name: self.benchmark_figure(benchmark, filename) for name, filename in files.figures.items()},
        }

    def position_groups(self, benchmark: str) -> dict[str, str]:
        """A benchmark's position-group table (Zeng et al.'s Table 1) and its figure, by output name."""
        return self.outputs(benchmark, POSITION_GROUPS_TABLE)

    def figure(self, benchmark: str, filename: str) -> str:
        return f"{self.root}/figures/{benchmark}/{filename}"

    def positions_figure(self, variant: str) -> str:
        """Where a benchmark's evidence sits (posir.plots), in its own folder."""
        return self.figure(variant, "positions.png")

    def saliency_figure(self, benchmark: str, model: str) -> str:
        return self.figure(benchmark, f"saliency-{model}.png")

    def segments_figure(self, benchmark: str, model: str) -> str:
        return self.figure(benchmark, f"segments-{model}.png")

    def significance(self, benchmark: str, setting: str, output: str) -> str:
        """A setting's paired tests, by output name (:data:`SIGNIFICANCE_FILES`)."""
        return self.table(benchmark, f"significance/{setting}.{SIGNIFICANCE_FILES[output]}")

    def saliency(self, benchmark: str, model: str, kind: str) -> str:
        return f"{self.root}/analyses/saliency/{benchmark}/{model}.{kind}.tsv"

    def representation(self, benchmark: str, model: str, kind: str) -> str:
        return f"{self.root}/analyses/representation/{benchmark}/{model}.{kind}.tsv"

    def published_table(self, name: str) -> dict[str, str]:
        """A published result's main table (posir.published), by output name."""
        return {key: f"{self.root}/tables/published/{name}/{f}" for key, f in PUBLISHED_TABLE.tables.items()}

    def paper_tables(self, table: str) -> dict[str, str]:
        return {key: f"{self.root}/tables/paper/{table}/{filename}" for key, filename in PAPER_TABLE_FILES.items()}

    # --- export: MTEB's results layout (posir.mteb_results) -----------------------------------------------

    def mteb_revision_dir(self, model: str) -> str:
        """A model entry's folder in MTEB's layout (``<cache>/results/<model name, / as __>/<revision>/``) under
        ``export/mteb``, which ``mteb.ResultCache(cache_path=...)`` reads; the entry is MTEB's ``posir/<entry>``."""
        return f"{self.root}/export/mteb/results/{MTEB_ORGANISATION}__{model}/{MTEB_NO_REVISION}"

    def mteb_task_result(self, model: str, benchmark: str) -> str:
        return f"{self.mteb_revision_dir(model)}/{MTEB_TASK_PREFIX}{benchmark}.json"

    def mteb_model_meta(self, model: str) -> str:
        return f"{self.mteb_revision_dir(model)}/model_meta.json"

    # --- logs and timings -------------------------------------------------------------------------------

    def log(self, rule: str, key: str) -> str:
        return f"{self.root}/logs/{rule}/{key}.log"

    def timing(self, rule: str, key: str) -> str:
        return f"{self.root}/timing/{rule}/{key}.tsv"
