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

    def position_groups(self, benchmark: str) -> dict[str, str]:
        """A benchmark's position-group table (Zeng et al.'s Table 1) and its figure, by output name."""
        return {
            **_beside(f"{self.table(benchmark, 'position_groups')}", csv=".csv", markdown=".md", latex=".tex"),
            "figure": self.benchmark_figure(benchmark, "position_groups.png"),
        }

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
