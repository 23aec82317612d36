"""A translation benchmark entry of ``config.yaml`` (``builder: translation``), checked and typed.

.. code-block:: yaml

    squad-long-apertium:
      builder: translation
      from: squad-long            # the benchmark translated
      from_language: eng          # its language variant used as source (default eng)
      translations:               # one language variant <name>-<lang> per entry
        spa: {backend: apertium, pair: eng-spa}
      filters: {...}              # optional, posir.translate.filters
      judge: {sample: 12}         # optional LLM quality judge (needs an llm section)

Errors name the key to fix (``benchmarks.<name>.translations.<lang>.<key>``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Self, Union

from pydantic import ConfigDict, Field, Strict, StringConstraints, model_validator
from pydantic.json_schema import SkipJsonSchema

from posir.builders import BenchmarkSpec, BuilderParams
from posir.llm.config import LLMConfig
from posir.schema import ConfigError, Entry, Int, KeyProblem, Language, PositiveInt, Str
from posir.translate.filters import FilterParams

BACKENDS = ("apertium", "llm", "parallel")
_PAIR = re.compile(r"^[a-z]{2,3}(?:_[A-Za-z]+)?-[a-z]{2,3}(?:_[A-Za-z]+)?$")


class TranslationConfigError(ConfigError):
    """A translation entry is inconsistent; the message names the key."""


class BackendSpec(Entry):
    """How one target language is translated (``translations.<lang>``)."""

    backend: str
    language: SkipJsonSchema[str] = ""
    """the target language: its key under ``translations`` (set from it, not a key)"""

    @property
    def source_names(self) -> dict[str, str]:
        """Role -> source name of the files this backend reads."""
        return {}


class ApertiumSpec(BackendSpec):
    """Debian's rule-based MT, offline, in null-flushed batches, cached by text hash."""

    backend: Literal["apertium"]
    pair: Annotated[str, Strict(), StringConstraints(pattern=_PAIR.pattern)]
    """apertium language pair, e.g. eng-spa (``apertium -l``)"""
    chunk_texts: PositiveInt = 200
    """texts per null-flush batch"""
    datadir: Str | None = None
    """apertium data directory (default /usr/share/apertium)"""


class LLMTranslationSpec(BackendSpec):
    """The shared LLM client with ``prompts/<prompt>.md``."""

    backend: Literal["llm"]
    prompt: Str = "translate"
    llm: dict[str, Any] = Field(default_factory=dict)
    """keys overriding the top-level llm section"""


class ParallelSpec(BackendSpec):
    """Human translations supplied as aligned files (e.g. XQuAD), through the same stage."""

    backend: Literal["parallel"]
    source_file: Str
    """the ``sources`` entry of the aligned source-language file"""
    target_file: Str
    """the ``sources`` entry of the aligned translated file"""

    @property
    def source_names(self) -> dict[str, str]:
        return {"parallel_source": self.source_file, "parallel_target": self.target_file}


TranslationBackend = Annotated[Union[ApertiumSpec, LLMTranslationSpec, ParallelSpec], Field(discriminator="backend")]


class JudgeParams(Entry):
    """LLM judge of translation quality (PosIR Appendix C.1): a seeded sample of documents, stratified by bucket."""

    sample: PositiveInt = 12
    seed: Int = 13
    max_chars: Annotated[int, Strict(), Field(ge=100)] = 3000
    prompt: Str = "judge_translation"


class TranslationEntry(BenchmarkSpec):
    """``builder: translation``: another benchmark translated into each target language (PosIR 3.4, Appendix C);
    each language is a variant ``<name>-<lang>`` with the full benchmark contract."""

    model_config = ConfigDict(serialize_by_alias=True, validate_by_name=True, validate_by_alias=True)
    error_type: ClassVar[type[ConfigError]] = TranslationConfigError

    builder: Literal["translation"]
    source_benchmark: Str = Field(alias="from")
    """the benchmark translated (its ``from_language`` variant is the source)"""
    source_language: Language = Field("eng", alias="from_language")
    """the source variant's language"""
    languages: dict[Language, TranslationBackend] = Field(alias="translations", min_length=1)
    """target language -> how it is translated; variant ``<name>-<lang>``"""
    filters: FilterParams = FilterParams()
    judge: JudgeParams | None = None
    """an LLM judge of a document sample (needs the llm section)"""
    params: BuilderParams = BuilderParams()

    @model_validator(mode="before")
    @classmethod
    def _target_languages(cls, data: Any) -> Any:
        """Each backend spec knows its target language (its key)."""
        if not isinstance(data, Mapping) or not isinstance(data.get("translations"), Mapping):
            return data
        translations = {}
        for language, spec in data["translations"].items():
            if isinstance(spec, Mapping):
                spec = {**spec, "language": language}
            translations[language] = spec
        return {**data, "translations": translations}

    @model_validator(mode="after")
    def _source_is_not_a_target(self) -> Self:
        if self.source_language in self.languages:
            raise KeyProblem(
                f"translations.{self.source_language}",
                "the source language (from_language) cannot also be a target",
                "remove it",
            )
        return self


def make_translator(
    spec: BackendSpec,
    source_language: str,
    *,
    llm: LLMConfig | Mapping[str, Any] | None = None,
    cache_path: str | Path | None = None,
    parallel_files: Mapping[str, Path] | None = None,
    progress: bool = True,
) -> Any:
    """The translator for ``spec`` (:mod:`posir.translate.backends`)."""
    from posir.translate import backends

    if spec.backend == "apertium":
        from posir.translate.apertium import DEFAULT_DATADIR, Apertium
        from posir.translate.cache import TranslationCache

        engine = Apertium(str(spec.pair), Path(spec.datadir) if spec.datadir else DEFAULT_DATADIR)
        cache = TranslationCache(cache_path) if cache_path else None
        return backends.ApertiumTranslator(engine, cache, spec.chunk_texts, progress=progress)
    if spec.backend == "llm":
        from posir.llm import load_prompt, open_client

        client = open_client(llm, needed_by=f"the llm translation into '{spec.language}'", progress=progress)
        return backends.LLMTranslator(client, load_prompt(spec.prompt), source_language, spec.language)
    from posir.builders.squad_format import load_squad_file

    if not parallel_files or set(parallel_files) != {"parallel_source", "parallel_target"}:
        raise TranslationConfigError("the parallel backend needs the files parallel_source and parallel_target")
    source, target = Path(parallel_files["parallel_source"]), Path(parallel_files["parallel_target"])
    pairs, by_id, conflicts = backends.parallel_pairs(
        load_squad_file(source), load_squad_file(target), f"{target.name} against {source.name}"
    )
    return backends.ParallelTranslator(pairs, {"source": source.name, "target": target.name}, conflicts, by_id)
