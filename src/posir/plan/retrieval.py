"""Planning retrieval: encoding every text set once per model, search, renormalization means, reranking."""

from __future__ import annotations

import math
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from posir import benchmark as fmt
from posir.builders.pairs import EvidencePairsBenchmark
from posir.languages import ONE_VS_MANY, Setting
from posir.models.declarations.readings import pooled_twin
from posir.models.declarations.spec import CONVERTED_PACKAGES, ModelSpec
from posir.models.weights.runtimes import EXPORTED_RUNTIMES
from posir.plan.base import Part, names_regex, scaled_mem_mb
from posir.plan.evaluation import runs_beside
from posir.plan.jobs import EncodeJob, RerankJob, RetrieveJob
from posir.scheduling import encode_priority
from posir.scorers.spec import BiEncoderSpec, LLMGradeSpec, RescoreSpec, ScorerSpec, scores_with_model

#: Bytes of one line of a run file (qid Q0 docid rank score tag), measured: 330 MB for 10570 x 1000 lines.
RUN_LINE_BYTES = 32


class RetrievalPlan(Part):
    """Encode, search, renormalization means and reranking pipelines."""

    # --- encoding -----------------------------------------------------------------------------------------

    def text_set_file(self, text_set: str, kind: str) -> str:
        """The texts of a text set: a benchmark (variant) or a text collection."""
        if text_set in self.config.text_collections:
            return f"{self.paths.collection_dir(text_set)}/{fmt.CORPUS}"
        return self.paths.benchmark_file(text_set, fmt.CORPUS if kind == "corpus" else fmt.QUERIES)

    def encode_inputs(self, wildcards: Any) -> dict[str, str]:
        """The texts, and the exported graph of an entry that runs on ONNX Runtime or OpenVINO."""
        inputs = {
            "texts": self.text_set_file(wildcards.text_set, wildcards.kind),
            **self.converted_inputs([wildcards.model]),
        }
        if self.config.models[wildcards.model].runtime in EXPORTED_RUNTIMES:
            inputs["exported"] = self.paths.exported_model(wildcards.model)["graph"]
        source = self.controlled_source(wildcards.model, wildcards.text_set, wildcards.kind)
        if source is not None:
            inputs["source_encoded"] = self.encoded_file(wildcards.model, source, wildcards.kind)
        first = self.first_encoder_of_queries(wildcards.model, wildcards.text_set, wildcards.kind)
        if first is not None:
            inputs["shared_encoded"] = self.encoded_file(first, wildcards.text_set, wildcards.kind)
        unpooled = self.unpooled_pass_of(wildcards.model, wildcards.text_set, wildcards.kind)
        if unpooled is not None:
            inputs["pooled_encoded"] = self.encoded_file(unpooled, wildcards.text_set, wildcards.kind)
        return inputs

    def unpooled_pass_of(self, model: str, text_set: str, kind: str) -> str | None:
        """The unpooled token-vector entry whose encode job of the same texts also files this dense entry's vectors
        (:func:`posir.models.registry.one_pass_twins`: its pass pools the token embeddings it keeps, as this entry
        reads the same weights), first by name; None where the run encodes none.

        An ordering edge only: run after it, this entry's job finds its texts cached (at f81f9d1 the encode jobs of
        me5-small and MiniLM over squad-long and its moved variants, 305 s and 71 s, ran the very passes the jobs of
        their unpooled entries ran).
        """
        spec = self.config.models[model]
        if not spec.is_dense or (model, text_set, kind) not in self.planned_encodings:
            return None
        return self._unpooled_passes.get((_whole_text_identity(spec), text_set, kind))

    @cached_property
    def _unpooled_passes(self) -> dict[tuple[str, str, str], str]:
        """(pooled identity, text set, kind) -> the first (by name) planned unpooled encoding filing those vectors."""
        passes: dict[tuple[str, str, str], str] = {}
        for other, text_set, kind in sorted(self.planned_encodings):
            twin = pooled_twin(self.config.models[other])
            if twin is not None:
                passes.setdefault((_whole_text_identity(twin), text_set, kind), other)
        return passes

    def analysis_encoded(self, wildcards: Any) -> dict[str, str]:
        """An analysis job's ordering edge: the encode job of its model over its benchmark's corpus, where the run
        makes one. The analysis encodes the documents through the embedding cache (and their segments beside them);
        run side by side with that encode job it found nothing cached and encoded them again (me5-small's 274
        squad-long documents, 98 s, in the representation job)."""
        encoded = self.config.embedding_model(wildcards.model)
        if (encoded, wildcards.benchmark, "corpus") not in self.planned_encodings:
            return {}
        return {"encoded_corpus": self.encoded_file(encoded, wildcards.benchmark, "corpus")}

    def first_encoder_of_queries(self, model: str, text_set: str, kind: str) -> str | None:
        """Another entry this run encodes the same queries with, under the same identity, that goes first.

        An ordering edge only, like :meth:`controlled_source`: an entry and its chunked twin (``me5-small``,
        ``me5-small-chunks``) read queries whole with the same model, so their vectors are shared in the cache;
        run side by side, both jobs encoded the queries (4,079 of squad-long's 10,570 twice for MiniLM). Of the
        entries sharing an identity, the plain ones go first, then by name; the others wait for the first.
        """
        if kind != "queries" or (model, text_set, kind) not in self.planned_encodings:
            return None
        identity = _whole_text_identity(self.config.models[model])
        sharing = [
            other
            for other, planned_set, planned_kind in self.planned_encodings
            if planned_set == text_set
            and planned_kind == kind
            and other != model
            and _whole_text_identity(self.config.models[other]) == identity
        ]
        if not sharing:
            return None
        first = min([model, *sharing], key=lambda name: (self.config.models[name].is_chunked, name))
        return None if first == model else first

    def controlled_source(self, model: str, text_set: str, kind: str) -> str | None:
        """The text set a controlled variant's texts come from, when ``model`` encodes it anyway.

        An ordering edge only: a variant's corpus is its source's with a hundred documents rearranged and its
        queries are a sample of the source's, so once the source is encoded the variant's job finds nearly every
        text in the embedding cache. Two jobs running at once do not see each other's cache entries: without the
        edge, a variant and its source encoded the same windows side by side (182 s each for MiniLM's chunks).
        The source is the nearest set this run encodes with ``model`` among the family's source and the benchmarks
        whose documents it took unchanged (evidence pairs take their source's); where none is encoded, the family's
        first variant goes first and the others find its texts cached (me5-small's chunks encoded the same 1,334
        windows of squad-long side by side in squad-long's job and a distance family's, 316 s each).
        """
        if text_set not in self.config.controlled_variants:
            return None
        family = self.config.family_of(text_set)
        for source in self._origins(family.source_benchmark, family.source_language, kind):
            if (model, source, kind) in self.planned_encodings:
                return source
        variants = [v for v, (name, _) in self.config.controlled_variants.items() if name == family.name]
        first = next((v for v in variants if (model, v, kind) in self.planned_encodings), None)
        return first if first != text_set else None

    def _origins(self, benchmark: str, language: str, kind: str) -> list[str]:
        """The one text set of ``benchmark``'s queries or corpus in ``language`` (none where its corpus is several
        sets), then those of the benchmark it took its documents from unchanged, nearest first."""
        if kind == "queries":
            sets = [self.config.query_variant(benchmark, language)]
        else:
            corpus = self.config.corpus_variants(benchmark, language)
            sets = corpus if len(corpus) == 1 else []
        entry = self.config.benchmarks.get(benchmark)
        if isinstance(entry, EvidencePairsBenchmark):
            sets += self._origins(entry.source_benchmark, entry.source_language, kind)
        return sets

    @cached_property
    def planned_encodings(self) -> frozenset[tuple[str, str, str]]:
        """Every (model, text set, kind) the search of some run reads (an evaluation's, or one made beside them:
        :func:`posir.plan.evaluation.runs_beside`): the encode jobs a run makes."""
        runs = [(e.benchmark, e.model, e.setting) for e in self.config.evaluations]
        runs += [(benchmark, model, Setting.parse(setting)) for benchmark, model, setting in runs_beside(self.config)]
        planned = set()
        for benchmark, model, setting in runs:
            if self.config.is_pipeline(model):
                model = self.config.pipelines[model].first_stage
            if not self.config.models[model].encodes:
                continue
            encoded = self.config.embedding_model(model)
            planned.add((encoded, self.config.query_variant(benchmark, setting.query_language), "queries"))
            for corpus_set in self.config.corpus_variants(benchmark, setting.corpus_language):
                planned.add((encoded, corpus_set, "corpus"))
        return frozenset(planned)

    def export_inputs(self, wildcards: Any) -> dict[str, str]:
        """The converted folder of an entry whose weights are converted; nothing otherwise."""
        return self.converted_inputs([wildcards.model])

    def encode(self, wildcards: Any) -> EncodeJob:
        return EncodeJob(model=self.config.models[wildcards.model], cache=self.config.embedding_cache)

    def encode_priority(self, wildcards: Any) -> int:
        """Snakemake ``priority:`` of an encode job: longest first (posir.scheduling.encode_priority)."""
        return encode_priority(self.config.models[wildcards.model], wildcards.kind)

    def converted_packages_regex(self) -> str:
        return names_regex(CONVERTED_PACKAGES)

    def export(self, wildcards: Any) -> EncodeJob:
        return EncodeJob(model=self.config.models[wildcards.model])

    def model_mem_mb(self, wildcards: Any) -> int:
        return self.config.models[wildcards.model].mem_mb

    def model_gpu(self, wildcards: Any) -> int:
        """1 when the model runs on a cuda device: the job asks the executor for a GPU."""
        return int(self.config.models[wildcards.model].uses_gpu)

    def embeddings(self, model: str, text_set: str, kind: str) -> str:
        """Embeddings of a text set; a model sharing another entry's embeddings (embeddings_from) reads those."""
        return self.paths.embeddings(self.config.embedding_model(model), text_set, kind)

    def models_of_output_regex(self, output: str) -> str:
        """The encoding entries of one ``output`` (dense, multi-vector, sparse): each has its own encode rule, since
        each writes other files."""
        return names_regex(name for name, spec in self.config.models.items() if spec.encodes and spec.output == output)

    def renorm_mean(self, model: str) -> str:
        collection = self.config.models[model].renorm_collection
        assert collection is not None
        return self.paths.renorm_mean(self.config.embedding_model(model), collection)["mean"]

    # --- settings: which queries search which corpus ----------------------------------------------------

    def query_variant(self, wildcards: Any) -> str:
        return self.config.query_variant(wildcards.benchmark, Setting.parse(wildcards.setting).query_language)

    def corpus_variants(self, wildcards: Any) -> list[str]:
        return self.config.corpus_variants(wildcards.benchmark, Setting.parse(wildcards.setting).corpus_language)

    def corpus_languages(self, wildcards: Any) -> list[str]:
        setting = Setting.parse(wildcards.setting)
        if setting.corpus_language == ONE_VS_MANY:
            return self.config.query_languages(wildcards.benchmark)
        return [setting.corpus_language]

    def id_prefixes(self, wildcards: Any) -> list[str]:
        """One-vs-many corpora prefix document ids with their language; single-language corpora do not."""
        if Setting.parse(wildcards.setting).corpus_language != ONE_VS_MANY:
            return []
        return self.config.query_languages(wildcards.benchmark)

    # --- search -----------------------------------------------------------------------------------------

    def retrieve_inputs(self, wildcards: Any) -> dict[str, Any]:
        query_dir = self.query_variant(wildcards)
        spec = self.config.models[wildcards.model]
        if spec.encodes and not spec.is_dense:
            return {
                "queries": self.encoded_file(wildcards.model, query_dir, "queries"),
                "corpus": [self.encoded_file(wildcards.model, v, "corpus") for v in self.corpus_variants(wildcards)],
            }
        if spec.is_dense:
            inputs: dict[str, Any] = {
                "queries": self.embeddings(wildcards.model, query_dir, "queries"),
                "corpus": [self.embeddings(wildcards.model, v, "corpus") for v in self.corpus_variants(wildcards)],
            }
            if spec.renorm:
                inputs["mean"] = self.renorm_mean(wildcards.model)
            return inputs
        return {
            "queries": self.paths.benchmark_file(query_dir, fmt.QUERIES),
            "corpus": [self.paths.benchmark_file(v, fmt.CORPUS) for v in self.corpus_variants(wildcards)],
        }

    def retrieve(self, wildcards: Any) -> RetrieveJob:
        return RetrieveJob(
            model=self.config.models[wildcards.model],
            top_k=self.config.top_k(wildcards.benchmark),
            corpus_languages=self.corpus_languages(wildcards),
            id_prefixes=self.id_prefixes(wildcards),
            embedding_model=self.config.embedding_model(wildcards.model),
            metrics=self.config.metrics,
        )

    def retrieve_gpu(self, wildcards: Any) -> int:
        """1 when the search job runs a model on a cuda device (``output: search``); a search of vectors needs none."""
        spec = self.config.models[wildcards.model]
        return int(spec.ranks_itself and spec.uses_gpu)

    def retrieve_runtime(self, wildcards: Any) -> int:
        """Minutes: a model that ranks the corpus itself encodes it in the job, as long as an encode job may take."""
        return 240 if self.config.models[wildcards.model].ranks_itself else 60

    def retrieve_mem_mb(self, wildcards: Any, input: Any) -> int:  # noqa: A002 - Snakemake's name
        """The larger of the search and the scoring of its run. Search, peak RSS measured: 70-90 MB of Python,
        plus up to 8 MB per MB of embeddings (dense: 188 MB for 17 MB) or 45 MB per MB of corpus text (BM25 keeps
        its index in Python objects: 194 MB for 3 MB). Scoring: 1097 MB for a 330 MB run (10570 queries x 1000),
        ~3 MB per MB of run, whose size follows from the queries (one line of positions.tsv each) and top_k.
        Multi-vector and sparse search: torch and the blocks (about 500 MB: a 128 MB product, a 256 MB score
        matrix), the float32 query vectors (twice their file) and the memory-mapped corpus (its file)."""
        spec = self.config.models[wildcards.model]
        per_mb = 8 if spec.is_dense else (3 if spec.encodes else 45)
        searched_mb = sum(Path(p).stat().st_size for p in [input.queries, *input.corpus]) / 2**20
        search = scaled_mem_mb(500 if spec.encodes and not spec.is_dense else 100, per_mb, searched_mb)
        if spec.ranks_itself:  # the model, as its entry declares, beside its index of the texts
            search += spec.mem_mb
        with open(input.positions, "rb") as positions:
            queries = max(sum(1 for _ in positions) - 1, 0)
        run_mb = queries * self.config.top_k(wildcards.benchmark) * RUN_LINE_BYTES / 2**20
        return max(search, scaled_mem_mb(150, 3, run_mb))

    # --- reranking pipelines ------------------------------------------------------------------------------

    def second_stage(self, wildcards: Any) -> ScorerSpec:
        return self.config.scorers[self.config.pipelines[wildcards.model].second_stage]

    def rerank_inputs(self, wildcards: Any) -> dict[str, Any]:
        query_dir = self.query_variant(wildcards)
        first_stage = self.config.pipelines[wildcards.model].first_stage
        return {
            "first_stage": self.paths.run(wildcards.benchmark, first_stage, wildcards.setting),
            "queries": self.paths.benchmark_file(query_dir, fmt.QUERIES),
            "positions": self.paths.benchmark_file(query_dir, fmt.POSITIONS),
            "corpus": [self.paths.benchmark_file(v, fmt.CORPUS) for v in self.corpus_variants(wildcards)],
            "windows_encoded_by": self.chunked_windows(wildcards),
            "prompts": self.second_stage_prompts(wildcards),
            **self.converted_inputs([getattr(self.second_stage(wildcards), "model", "")]),
        }

    def second_stage_prompts(self, wildcards: Any) -> list[str]:
        """The prompt files an LLM second stage reads (inputs, so editing one reruns its reranks); its cache keys
        on the prompt's hash, so a rerun asks only for the pairs the new prompt has not seen."""
        scorer = self.second_stage(wildcards)
        if not isinstance(scorer, LLMGradeSpec):
            return []
        return [*self._prompt_files(scorer.prompt), *self._prompt_files(scorer.grade_prompt)]

    def _prompt_files(self, name: str) -> list[str]:
        schema = self.prompts_dir / f"{name}.schema.json"
        return [str(self.prompts_dir / f"{name}.md")] + ([str(schema)] if schema.exists() else [])

    def chunked_windows(self, wildcards: Any) -> list[str]:
        """Corpus embeddings of a chunked entry evaluated beside the pipeline that hold the very windows its
        bi-encoder (or rescore) second stage reads (same window identity, window and stride).

        An ordering edge only: the rerank job then finds every window in the embedding cache, where it would
        otherwise encode the same windows at the same time as that entry's encode job (on 2 cores, me5-small's
        squad-long windows twice over).
        """
        scorer = self.second_stage(wildcards)
        if not isinstance(scorer, BiEncoderSpec | RescoreSpec):
            return []
        wanted = (_window_identity(self.config.models[scorer.model]), scorer.window_tokens, scorer.stride_tokens)
        evaluated = {
            e.model
            for e in self.config.evaluations_by_benchmark.get(wildcards.benchmark, [])
            if str(e.setting) == wildcards.setting
            and e.model in self.config.models
            and self.config.models[e.model].is_chunked
        }
        return [
            self.embeddings(model, variant, "corpus")
            if self.config.models[model].is_dense
            else self.encoded_file(model, variant, "corpus")
            for model in sorted(evaluated)
            if (_window_identity(spec := self.config.models[model]), spec.window_tokens, spec.stride_tokens) == wanted
            for variant in self.corpus_variants(wildcards)
        ]

    def rerank(self, wildcards: Any) -> RerankJob:
        scorer = self.second_stage(wildcards)
        models = {scorer.model: self.config.models[scorer.model]} if scores_with_model(scorer) else {}
        llm = self.config.llm.answer_settings() if isinstance(scorer, LLMGradeSpec) and self.config.llm else {}
        return RerankJob(
            pipeline=self.config.pipelines[wildcards.model],
            scorer=scorer,
            models=models,
            id_prefixes=self.id_prefixes(wildcards),
            llm=llm,
            score_cache=self.config.score_cache,
            embedding_cache=self.config.embedding_cache,
        )

    def second_stage_mem_mb(self, wildcards: Any) -> int:
        scorer = self.second_stage(wildcards)
        if scores_with_model(scorer):
            return max(scorer.mem_mb, self.config.models[scorer.model].mem_mb)  # type: ignore[attr-defined]
        return scorer.mem_mb

    def rerank_mem_mb(self, wildcards: Any, input: Any) -> int:  # noqa: A002 - Snakemake's name
        """The second stage's model (its mem_mb) plus the first-stage run and the pairs held in memory: measured
        2200 MB peak for 318 MB of input (squad-long, minilm-l6 first stage, depth 100), about 5.3 MB per MB above
        the model; 6 MB per MB here. The chunked entry's embeddings (an ordering input, never read) do not count."""
        unread = sum(Path(p).stat().st_size for p in input.windows_encoded_by if Path(p).exists()) / 2**20
        return self.second_stage_mem_mb(wildcards) + 100 * math.ceil(6 * max(input.size_mb - unread, 0) / 100)

    def second_stage_gpu(self, wildcards: Any) -> int:
        scorer = self.second_stage(wildcards)
        if scores_with_model(scorer):
            return int(self.config.models[scorer.model].uses_gpu)  # type: ignore[attr-defined]
        return int(scorer.uses_gpu)


@cache
def _identity_of(spec_json: str, whole: bool) -> str:
    from posir.models.identity import whole_text_identity, window_identity

    spec = ModelSpec.model_validate_json(spec_json)
    return whole_text_identity(spec) if whole else window_identity(spec)


def _window_identity(spec: ModelSpec) -> str:
    """The identity a window is encoded under (posir.models.identity.window_identity), computed once per entry:
    it hashes our encoding code, which is the slow part."""
    return _identity_of(spec.model_dump_json(), whole=False)


def _whole_text_identity(spec: ModelSpec) -> str:
    """The identity a query is encoded under (posir.models.identity.whole_text_identity), once per entry."""
    return _identity_of(spec.model_dump_json(), whole=True)
