"""Where every result lives: one function per kind of file, under the results directory.

Called with wildcard placeholders (``run("{benchmark}", "{model}", "{setting}")``) they give the patterns rules
declare as outputs; called with values they give the files the plan asks for as inputs. Both come from here, so
a rule's output and the input that waits for it cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from posir import benchmark as fmt

#: The per-run files of a score_run job (scores, aggregates, trend, the position figure), by output name.
AGGREGATES = ("bins", "summary", "bootstrap", "bootstrap_bins", "trend")
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


@dataclass(frozen=True)
class ResultPaths:
    """The result files of a workflow run, under ``root``."""

    root: str = "results"

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
        directory = self.collection_dir(collection)
        return {"corpus": f"{directory}/{fmt.CORPUS}", "drops": f"{directory}/{fmt.DROPS}",
                "card": f"{directory}/{fmt.CARD}"}

    def generation_stage_dir(self, benchmark: str, stage: str) -> str:
        return f"{self.root}/generation/{benchmark}/{stage}"

    def generation_file(self, benchmark: str, stage: str, filename: str) -> str:
        return f"{self.generation_stage_dir(benchmark, stage)}/{filename}"

    def generation_stage_outputs(self, benchmark: str, stage: str, files: dict[str, str]) -> dict[str, str]:
        """A generation stage's outputs: its own ``files`` (name -> file name), its drops.tsv and counts.json."""
        directory = self.generation_stage_dir(benchmark, stage)
        return {**{name: f"{directory}/{filename}" for name, filename in files.items()},
                "drops": f"{directory}/{fmt.DROPS}", "counts": f"{directory}/{fmt.COUNTS}"}

    def translation_judge(self, variant: str) -> dict[str, str]:
        return {"judged": f"{self.root}/translation/{variant}/judge.tsv",
                "usage": f"{self.root}/translation/{variant}/judge.usage.json"}

    # --- embeddings, runs, scores, aggregates -----------------------------------------------------------

    def embeddings(self, model: str, text_set: str, kind: str) -> str:
        return f"{self.root}/embeddings/{model}/{text_set}/{kind}.npy"

    def embedding_outputs(self, model: str, text_set: str, kind: str) -> dict[str, str]:
        return {"embeddings": self.embeddings(model, text_set, kind),
                "ids": f"{self.root}/embeddings/{model}/{text_set}/{kind}.ids.tsv"}

    def renorm_mean(self, model: str, collection: str) -> dict[str, str]:
        return {"mean": f"{self.root}/embeddings/{model}/{collection}/corpus.mean.npy",
                "provenance": f"{self.root}/embeddings/{model}/{collection}/corpus.mean.json"}

    def run(self, benchmark: str, model: str, setting: str) -> str:
        return f"{self.root}/runs/{benchmark}/{model}/{setting}.trec"

    def rerank_outputs(self, benchmark: str, model: str, setting: str) -> dict[str, str]:
        stem = f"{self.root}/runs/{benchmark}/{model}/{setting}"
        return {"run": f"{stem}.trec", "evaluated": f"{stem}.queries.tsv", "card": f"{stem}.card.json"}

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
        return {"per_query": self.scores(benchmark, model, setting),
                **{suffix: self.aggregate(benchmark, model, setting, suffix) for suffix in AGGREGATES}}

    # --- tables, figures, analyses ----------------------------------------------------------------------

    def table(self, benchmark: str, filename: str) -> str:
        return f"{self.root}/tables/{benchmark}/{filename}"

    def figure(self, benchmark: str, filename: str) -> str:
        return f"{self.root}/figures/{benchmark}/{filename}"

    def significance(self, benchmark: str, setting: str, extension: str) -> str:
        return f"{self.root}/tables/{benchmark}/significance/{setting}.{extension}"

    def saliency(self, benchmark: str, model: str, kind: str) -> str:
        return f"{self.root}/analyses/saliency/{benchmark}/{model}.{kind}.tsv"

    def representation(self, benchmark: str, model: str, kind: str) -> str:
        return f"{self.root}/analyses/representation/{benchmark}/{model}.{kind}.tsv"

    def published_table(self, name: str, filename: str) -> str:
        return f"{self.root}/tables/published/{name}/{filename}"

    def paper_tables(self, table: str) -> dict[str, str]:
        return {key: f"{self.root}/tables/paper/{table}/{filename}" for key, filename in PAPER_TABLE_FILES.items()}

    # --- logs and timings -------------------------------------------------------------------------------

    def log(self, rule: str, key: str) -> str:
        return f"{self.root}/logs/{rule}/{key}.log"

    def timing(self, rule: str, key: str) -> str:
        return f"{self.root}/timing/{rule}/{key}.tsv"
