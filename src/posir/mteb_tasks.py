"""Our benchmarks as MTEB retrieval tasks, with PosIR's position breakdown beside MTEB's scores.

A task is built from the benchmark contract (``posir.benchmark``: ``corpus.jsonl``, ``queries.jsonl``,
``qrels/test.tsv``, ``positions.tsv``, ``card.json``) of any benchmark the workflow made (built, translated,
generated, imported or controlled), one ``hf_subset`` per setting (``eng-eng``, ``deu-eng``), so that

    task = workflow_task("squad-long")            # in the workflow's directory, after snakemake built it
    result = mteb.evaluate(model, tasks=[task])

scores it as MTEB scores any retrieval task (its own search, its own ``pytrec_eval`` scoring) and adds, per subset,
``posir_position_bias``: PosIR's nDCG@10 per length bucket and per position bin (section 4: a bucket's nDCG@10 is
the mean of its non-empty bin means) and PSI = 1 - min/max of the bin means, computed from MTEB's own per-query
nDCG@10 (kept in the task's ``per_query_ndcg``). The task's metadata comes from the cards: its
languages, its licence (the sources' licences in config.yaml, matched by checksum), its provenance.

Documents are read as ``text`` alone, as the workflow encodes them (a title would shift every position).
One-vs-many settings (``deu-mul``) are not offered: their corpus is the union of every language's copy.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import pandas as pd

from posir import benchmark as fmt
from posir.languages import ONE_VS_MANY, Setting, setting_languages
from posir.metrics import aggregate
from posir.metrics.bootstrap import bootstrap_summary
from posir.metrics.columns import BUCKET, POSITION_BIN, QID
from posir.metrics.groupings import Grouping, RelativeBins
from posir.metrics.measures import POSITION_MEASURE
from posir.metrics.params import MetricParams, TableParams
from posir.metrics.per_query import trec_eval_order
from posir.models.backends.mteb import SPLIT, retrieval_metadata
from posir.mteb_results import POSIR_KEY, cards_revision, position_bias, position_groups, task_name
from posir.results.paths import MTEB_NO_REVISION
from posir.results.runs import read_trec_run

#: MTEB's per-query measure (``pytrec_eval``'s name) that the position breakdown is computed from
MTEB_NDCG_AT_10 = POSITION_MEASURE.result

_LICENCES = {"cc by-sa 4.0": "cc-by-sa-4.0", "cc by 4.0": "cc-by-4.0", "mit": "mit", "apache 2.0": "apache-2.0"}


@dataclass(frozen=True)
class SubsetFiles:
    """One subset (a setting) of a task: the benchmark directory of its queries and those of its corpus."""

    queries: Path
    corpus: tuple[Path, ...]

    def card(self) -> dict[str, Any]:
        return json.loads((self.queries / fmt.CARD).read_text())


def _required(path: Path) -> Path:
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: missing; build the benchmark first (snakemake results/benchmarks/{path.parent.name}/card.json)"
        )
    return path


def mteb_licence(licences: Sequence[str]) -> str:
    """MTEB's licence name for the sources' licences: one known licence, ``multiple``, or ``not specified``."""
    named = {_LICENCES.get(licence.strip().lower(), licence) for licence in licences}
    if len(named) > 1:
        return "multiple"
    (only,) = named or {"not specified"}
    return only if only in _LICENCES.values() else "not specified"


@functools.cache
def _task_class() -> type:
    """The base of every task, made on first use (mteb is imported only when a task is); each task is a subclass
    holding its metadata, where MTEB looks for it."""
    from mteb.abstasks.retrieval import AbsTaskRetrieval

    class PositionAwareRetrieval(AbsTaskRetrieval):  # type: ignore[misc]
        """A benchmark of ours as an MTEB retrieval task; see the module docstring."""

        def __init__(
            self, subsets: Mapping[str, SubsetFiles], params: TableParams | MetricParams, grouping: Grouping | None
        ) -> None:
            self.subsets = dict(subsets)
            self.params = params
            self.grouping = grouping
            #: MTEB's per-query nDCG@10 of the last evaluation, by subset and query id
            self.per_query_ndcg: dict[str, dict[str, float]] = {}
            super().__init__()

        def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
            from datasets import Dataset

            if self.data_loaded:
                return
            self.dataset = {}
            for subset, files in self.subsets.items():
                documents = [d for folder in files.corpus for d in fmt.read_corpus(_required(folder / fmt.CORPUS))]
                queries = fmt.read_queries(_required(files.queries / fmt.QUERIES))
                qrels = fmt.read_qrels(_required(files.queries / fmt.QRELS))
                self.dataset[subset] = {
                    SPLIT: {
                        "corpus": Dataset.from_dict(
                            {"id": [d.doc_id for d in documents], "text": [d.text for d in documents]}
                        ),
                        "queries": Dataset.from_dict(
                            {"id": [q.qid for q in queries], "text": [q.text for q in queries]}
                        ),
                        "relevant_docs": qrels,
                        "top_ranked": None,
                    }
                }
            self.data_loaded = True

        def task_specific_scores(
            self,
            scores: dict[str, dict[str, float]],
            qrels: Any,
            results: dict[str, dict[str, float]],
            hf_split: str,
            hf_subset: str,
        ) -> dict[str, Any]:
            per_query = {qid: float(measures[MTEB_NDCG_AT_10]) for qid, measures in scores.items()}
            self.per_query_ndcg[hf_subset] = per_query
            positions = fmt.read_positions(self.subsets[hf_subset].queries / fmt.POSITIONS)
            return {POSIR_KEY: position_breakdown(per_query, positions, self.params, self.grouping)}

    return PositionAwareRetrieval


@functools.cache
def _run_search_class() -> type:
    from mteb.models.model_meta import ModelMeta

    class RunSearch:
        """MTEB's search interface over finished runs of the workflow: ``search`` answers a subset's queries with the
        run's scores, so MTEB's own evaluator scores our run (the third check of our measures, beside
        ``pytrec_eval`` and hand computations)."""

        def __init__(self, name: str, runs: Mapping[str, Path]) -> None:
            self.runs = dict(runs)
            self._meta = ModelMeta.create_empty(overwrites={"name": name, "revision": MTEB_NO_REVISION})

        @property
        def mteb_model_meta(self) -> Any:
            return self._meta

        def index(self, corpus: Any, **kwargs: Any) -> None:
            """Nothing to index: the run holds every score."""

        def search(self, queries: Any, *, hf_subset: str, top_k: int, **kwargs: Any) -> dict[str, dict[str, float]]:
            if hf_subset not in self.runs:
                raise KeyError(f"no run given for subset '{hf_subset}'; runs: {sorted(self.runs)}")
            run = read_trec_run(self.runs[hf_subset])
            return {
                qid: {doc: run[qid][doc] for doc in trec_eval_order(run[qid])[:top_k]}
                for qid in queries["id"]
                if qid in run
            }

    return RunSearch


def run_search(name: str, runs: Mapping[str, Path | str]) -> Any:
    """An MTEB search model (``mteb.evaluate(run_search(...), tasks=[task])``) that answers each subset (setting) with
    the workflow's run file for it, ``results/runs/<benchmark>/<model>/<setting>.trec``; ``name`` is its MTEB name."""
    return _run_search_class()(name, {subset: Path(path) for subset, path in runs.items()})


def position_breakdown(
    per_query: Mapping[str, float],
    positions: Sequence[Any],
    params: TableParams | MetricParams,
    grouping: Grouping | None = None,
) -> dict[str, Any]:
    """PosIR's numbers from per-query nDCG@10, as the workflow's own export writes them (posir.mteb_results
    .position_bias): per bucket the bin-mean nDCG@10, the query mean and PSI, with their bootstrap intervals when the
    params have a bootstrap, and the bins of all queries (posir.metrics.aggregate and .bootstrap, the code of our own
    aggregates); with ``grouping`` (a benchmark grouped otherwise than by relative bins) its ``position_groups``
    (posir.mteb_results.position_groups). Queries without an evidence span are in no bin."""
    metric = POSITION_MEASURE.column
    frame = pd.DataFrame([asdict(p) for p in positions], columns=[f.name for f in fields(fmt.Position)])
    frame = frame[frame[QID].isin(per_query)].assign(**{metric: lambda f: f[QID].map(per_query)})
    spanned = frame[frame[POSITION_BIN].notna()].astype({POSITION_BIN: "int64"})
    bins = aggregate.bin_table(spanned, params.bucket_names, params.n_bins)
    summary = aggregate.summarize(spanned, bins, params.min_bin_queries).set_index(BUCKET)
    intervals = None
    if isinstance(params, MetricParams):
        intervals, _ = bootstrap_summary(
            spanned, params.bucket_names, params.n_bins, params.min_bin_queries, params.bootstrap
        )
        intervals = intervals.set_index(BUCKET)
    breakdown = position_bias(summary, bins, intervals, None)
    if grouping is not None:
        metrics = params if isinstance(params, MetricParams) else MetricParams(**params.model_dump())
        breakdown["position_groups"] = position_groups(frame, grouping, metrics)
    return breakdown


def benchmark_task(
    subsets: Mapping[str, SubsetFiles],
    name: str,
    licences: Sequence[str] = (),
    params: TableParams | MetricParams | None = None,
    grouping: Grouping | None = None,
) -> Any:
    """The MTEB task of a benchmark whose settings (``hf_subset`` -> directories) are ``subsets``; with ``grouping``
    (one other than PosIR's relative bins) its scores hold the position groups too."""
    if not subsets:
        raise ValueError(f"benchmark '{name}': no settings to make an MTEB task of")
    card_files = [_required(f / fmt.CARD) for files in subsets.values() for f in (files.queries, *files.corpus)]
    cards = [files.card() for files in subsets.values()]
    provenance = sorted({str(card.get("provenance") or card.get("builder", "")) for card in cards})
    metadata = retrieval_metadata(
        task_name(name),
        f"posir-workflow benchmark '{name}' (PosIR-style position-aware retrieval; provenance: "
        f"{', '.join(provenance)}). One relevant document per query; positions of the evidence in positions.tsv.",
        {setting: setting_languages(setting) for setting in subsets},
        dataset={"path": str(next(iter(subsets.values())).queries.parent), "revision": cards_revision(card_files)},
        license=mteb_licence(licences),
        sample_creation="created",
        annotations_creators="derived",
    )
    task_type = type(f"PositionAwareRetrieval[{name}]", (_task_class(),), {"metadata": metadata})
    return task_type(subsets, params or MetricParams(), grouping)


def workflow_task(
    benchmark: str,
    settings: Sequence[str] | None = None,
    config_files: Sequence[Path | str] = ("config.yaml",),
    results: Path | str = "results",
) -> Any:
    """The MTEB task of the workflow's benchmark ``benchmark``: the settings its evaluation blocks list (or
    ``settings``), from the directories under ``results/benchmarks/`` the workflow wrote, read with the config files
    (later ones merged over earlier ones, as ``--configfile`` does)."""
    import yaml
    from snakemake.utils import update_config

    from posir.config import load_config

    raw: dict[str, Any] = {}
    for path in config_files:
        update_config(raw, yaml.safe_load(Path(path).read_text()) or {})
    config = load_config(raw)
    if settings is None:  # every evaluated setting an MTEB task can hold (one-vs-many corpora are not)
        evaluated = {e.setting for e in config.evaluations if e.benchmark == benchmark}
        settings = sorted(str(s) for s in evaluated if s.corpus_language != ONE_VS_MANY)
    subsets = {}
    for text in settings:
        setting = Setting.parse(text)
        if setting.corpus_language == ONE_VS_MANY:
            raise ValueError(f"benchmark '{benchmark}': setting '{text}' is one-vs-many; MTEB tasks hold one corpus")
        query, corpus = config.setting_variants(benchmark, setting)
        root = Path(results) / "benchmarks"
        subsets[text] = SubsetFiles(root / query, tuple(root / variant for variant in corpus))
    licences = _source_licences(config, subsets.values())
    positions = config.benchmarks[benchmark].positions if benchmark in config.benchmarks else None
    grouping = None if positions is None or isinstance(positions, RelativeBins) else positions
    return benchmark_task(subsets, benchmark, licences, config.metrics, grouping)


def _source_licences(config: Any, subsets: Any) -> list[str]:
    """The licences config.yaml gives the sources the subsets' cards name (matched by sha256)."""
    by_checksum = {source.sha256: source.licence for source in config.sources.values() if source.licence}
    checksums = set()
    for files in subsets:
        for folder in (files.queries, *files.corpus):
            sources = json.loads(_required(folder / fmt.CARD).read_text()).get("sources", {})
            checksums |= {s.get("sha256") for s in sources.values() if isinstance(s, Mapping)}
    return sorted({by_checksum[c] for c in checksums if c in by_checksum})
