"""Translators: one interface for machine translation and human translations supplied as files.

* ``apertium``: Debian's rule-based MT, offline (:mod:`posir.translate.apertium`),
  cached on disk by text hash (:mod:`posir.translate.cache`);
* ``llm``: the shared OpenAI-compatible client with the prompt file
  ``prompts/translate.md`` (PosIR Appendix D.4); cached, retried and counted by
  :class:`posir.llm.LLMClient`;
* ``parallel``: professional translations given as parallel files (XQuAD):
  each source text is looked up in the aligned file, so human and machine
  translations go through the same units, filters and positions.

A translator never raises for one bad text: it returns a failed
:class:`Translation` with an ``error_kind`` that the stage counts as a drop.
It raises for what no text can survive (apertium missing, a wrong API key).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from tqdm.auto import tqdm

from posir.languages import display_name
from posir.translate.apertium import Apertium, ApertiumError
from posir.translate.cache import TranslationCache

logger = logging.getLogger("posir.translate")


@dataclass(frozen=True)
class Translation:
    """One text's outcome: ``text`` when ``ok``, else ``error_kind`` and ``error``."""

    ok: bool
    text: str = ""
    error_kind: str | None = None
    error: str | None = None


class Translator(Protocol):
    backend: str

    def translate(self, texts: Sequence[str], unit: str, ids: Sequence[str] | None = None) -> list[Translation]: ...

    def describe(self) -> dict[str, Any]: ...

    def usage(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


def _unique(texts: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(t for t in texts if t))


class ApertiumTranslator:
    """Apertium in null-flush batches of ``chunk_texts`` texts; each text translated once, ever (cache)."""

    backend = "apertium"

    def __init__(
        self, engine: Apertium, cache: TranslationCache | None, chunk_texts: int, progress: bool = True
    ) -> None:
        engine.check()
        self.engine = engine
        self.cache = cache
        self.chunk_texts = chunk_texts
        self.progress = progress
        self.identity = engine.identity()
        self._usage: dict[str, dict[str, Any]] = {}

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "pair": self.engine.pair,
            "engine": self.identity,
            "note": "rule-based MT, null-flush batches (posir.translate.apertium)",
        }

    def translate(self, texts: Sequence[str], unit: str, ids: Sequence[str] | None = None) -> list[Translation]:
        started = time.perf_counter()
        unique = _unique(texts)
        done = self.cache.get_many(self.identity, unique) if self.cache is not None else {}
        hits = len(done)
        misses = [t for t in unique if t not in done]
        failed: dict[str, str] = {}
        with tqdm(
            total=len(misses), desc=f"apertium {self.engine.pair} {unit}", unit="text", disable=not self.progress
        ) as bar:
            for start in range(0, len(misses), self.chunk_texts):
                chunk = misses[start : start + self.chunk_texts]
                fresh = self._chunk(chunk, failed)
                done.update(fresh)
                if self.cache is not None and fresh:
                    self.cache.put_many(self.identity, fresh)
                bar.update(len(chunk))
        seconds = time.perf_counter() - started
        chars = sum(len(t) for t in misses)
        self._usage[unit] = {
            "texts": len(texts),
            "unique_texts": len(unique),
            "cache_hits": hits,
            "translated": len(misses),
            "failed": len(failed),
            "source_chars_translated": chars,
            "seconds": round(seconds, 2),
            "chars_per_second": round(chars / seconds) if misses and seconds > 0 else None,
        }
        results = []
        for text in texts:
            if not text:
                results.append(Translation(True, ""))
            elif text in failed:
                results.append(Translation(False, error_kind="engine_error", error=failed[text]))
            else:
                results.append(Translation(True, done[text]))
        return results

    def _chunk(self, chunk: list[str], failed: dict[str, str]) -> dict[str, str]:
        try:
            return dict(zip(chunk, self.engine.translate_batch(chunk)))
        except ApertiumError as error:
            if len(chunk) == 1:
                failed[chunk[0]] = str(error)[:300]
                return {}
            # One text broke the batch's alignment: translate the batch's texts one by one.
            logger.warning("apertium batch of %d texts failed (%s); retrying one by one", len(chunk), error)
            out: dict[str, str] = {}
            for text in chunk:
                out.update(self._chunk([text], failed))
            return out

    def usage(self) -> dict[str, Any]:
        return dict(self._usage)

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()


class LLMTranslator:
    """The shared LLM client with ``prompts/<prompt>.md`` (PosIR Appendix D.4); one call per text."""

    backend = "llm"

    def __init__(self, client: Any, template: Any, source_language: str, target_language: str) -> None:
        self.client = client
        self.template = template
        self.source_language = source_language
        self.target_language = target_language

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "model": self.client.config.model,
            "prompt": self.template.name,
            "prompt_sha256": self.template.sha256,
            "temperature": self.client.config.temperature,
            "max_tokens": self.client.config.max_tokens,
        }

    def translate(self, texts: Sequence[str], unit: str, ids: Sequence[str] | None = None) -> list[Translation]:
        unique = _unique(texts)
        inputs = [
            {
                "text": t,
                "source_language": display_name(self.source_language),
                "target_language": display_name(self.target_language),
            }
            for t in unique
        ]
        answers = dict(zip(unique, self.client.map(f"translate_{unit}", self.template, inputs)))
        results = []
        for text in texts:
            if not text:
                results.append(Translation(True, ""))
                continue
            answer = answers[text]
            if answer.ok:
                results.append(Translation(True, str(answer.value["translation"])))
            else:
                results.append(Translation(False, error_kind=f"llm_{answer.error_kind}", error=answer.error))
        return results

    def usage(self) -> dict[str, Any]:
        return self.client.usage()

    def close(self) -> None:
        self.client.close()


class ParallelTranslator:
    """Human translations from parallel files: a source text's translation is its aligned counterpart."""

    backend = "parallel"

    def __init__(
        self,
        pairs: Mapping[str, str],
        files: Mapping[str, str],
        conflicts: int = 0,
        by_id: Mapping[str, tuple[str, str]] | None = None,
    ) -> None:
        self.pairs = dict(pairs)
        self.by_id = dict(by_id or {})
        self.files = dict(files)
        self.conflicts = conflicts
        self._usage: dict[str, dict[str, Any]] = {}

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "files": self.files,
            "aligned_texts": len(self.pairs),
            "conflicting_alignments": self.conflicts,
        }

    def translate(self, texts: Sequence[str], unit: str, ids: Sequence[str] | None = None) -> list[Translation]:
        """By record id where the files have it (question ids: two questions may share an English text but
        not a translation), else by the source text itself (paragraphs)."""
        results = []
        for index, text in enumerate(texts):
            aligned = self.by_id.get(ids[index]) if ids is not None else None
            if not text:
                results.append(Translation(True, ""))
            elif aligned is not None and aligned[0] == text:
                results.append(Translation(True, aligned[1]))
            elif text in self.pairs:
                results.append(Translation(True, self.pairs[text]))
            else:
                results.append(
                    Translation(
                        False,
                        error_kind="no_parallel_text",
                        error="the source text has no counterpart in the parallel files",
                    )
                )
        missing = sum(1 for r in results if not r.ok)
        self._usage[unit] = {"texts": len(texts), "found": len(texts) - missing, "missing": missing}
        return results

    def usage(self) -> dict[str, Any]:
        return dict(self._usage)

    def close(self) -> None:
        pass


def parallel_pairs(
    source_data: Mapping[str, Any], target_data: Mapping[str, Any], label: str
) -> tuple[dict[str, str], dict[str, tuple[str, str]], int]:
    """From two aligned SQuAD/XQuAD-format files (contexts by position, questions by id): source text ->
    translation, question id -> (source text, translation), and the count of source texts aligned to two
    different translations (the text map keeps the first; the id map has both)."""
    from posir.builders.xquad import _questions, check_parallel, question_texts

    check_parallel(source_data, target_data, label)
    pairs: dict[str, str] = {}
    conflicts = 0

    def add(source: str, target: str) -> None:
        nonlocal conflicts
        if not source or not target:
            return
        if source in pairs and pairs[source] != target:
            conflicts += 1
            return
        pairs.setdefault(source, target)

    for article, target_article in zip(source_data["data"], target_data["data"]):
        for paragraph, target_paragraph in zip(article["paragraphs"], target_article["paragraphs"]):
            add(paragraph["context"], target_paragraph["context"])
    targets = question_texts(target_data)
    by_id: dict[str, tuple[str, str]] = {}
    for _, _, qa in _questions(source_data):
        source, target = str(qa.get("question", "")).strip(), targets.get(str(qa["id"]), "")
        add(source, target)
        if source and target:
            by_id[str(qa["id"])] = (source, target)
    return pairs, by_id, conflicts
