"""Text collections that are not benchmarks: the texts a renormalization mean is estimated on.

The mean-bias paper (section 3.1) estimates each model's mean embedding on
100,000 Wikipedia sentences of 64-512 characters, disjoint from every
evaluated dataset. Offline, the disjoint English prose at hand is CPython's
bundled reference documentation (``pydoc_data.topics``): technical prose, never
Wikipedia, so it shares no text with SQuAD or XQuAD. A user with a larger or
closer collection names it as a source instead (one text per line, or JSONL
with a ``text`` field).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from posir.benchmark import CARD, CORPUS, DROPS, Document, Drop, StageCount, stage_count, write_drops
from posir.records import write_json, write_jsonl
from posir.schema import Entry, Int, PositiveInt, Str

STAGE_SENTENCES = "select_sentences"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WHITESPACE = re.compile(r"\s+")


class CollectionParams(Entry):
    """A ``text_collections`` entry: texts that are not a benchmark, e.g. the disjoint collection a renorm mean is
    estimated on; sentence length range and an optional seeded sample."""

    min_chars: PositiveInt = 64
    max_chars: PositiveInt = 512
    max_texts: PositiveInt | None = None
    seed: Int = 13
    source: Str | None = None
    """a source: one text per line, or JSONL with a text field; default: CPython's reference docs"""


def python_reference_texts() -> list[str]:
    from pydoc_data.topics import topics

    return [topics[name] for name in sorted(topics)]


def read_texts(path: Path) -> list[str]:
    """One text per line, or JSONL records with a ``text`` field."""
    texts = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            if str(path).endswith(".jsonl"):
                try:
                    texts.append(str(json.loads(line)["text"]))
                except (json.JSONDecodeError, KeyError) as error:
                    raise ValueError(
                        f"{path}, line {number}: expected a JSON object with a 'text' field ({error})"
                    ) from error
            else:
                texts.append(line.rstrip("\n"))
    return texts


def sentences(texts: Iterable[str]) -> list[str]:
    return [_WHITESPACE.sub(" ", s).strip() for text in texts for s in _SENTENCE_END.split(text)]


def select_sentences(
    texts: Iterable[str], params: CollectionParams, prefix: str
) -> tuple[list[Document], list[Drop], StageCount]:
    """Sentences of ``min_chars..max_chars`` characters, deduplicated, seeded sample of ``max_texts``."""
    candidates = sentences(texts)
    drops: list[Drop] = []
    kept: list[str] = []
    seen: set[str] = set()
    for index, sentence in enumerate(candidates):
        if not params.min_chars <= len(sentence) <= params.max_chars:
            drops.append(Drop(STAGE_SENTENCES, f"{prefix}{index}", "length_outside_range"))
        elif sentence in seen:
            drops.append(Drop(STAGE_SENTENCES, f"{prefix}{index}", "duplicate_sentence"))
        else:
            seen.add(sentence)
            kept.append(sentence)
    if params.max_texts is not None and len(kept) > params.max_texts:
        order = np.random.default_rng(params.seed).permutation(len(kept))
        chosen = set(order[: params.max_texts].tolist())
        drops += [Drop(STAGE_SENTENCES, f"{prefix}kept{i}", "subsampled") for i in range(len(kept)) if i not in chosen]
        kept = [s for i, s in enumerate(kept) if i in chosen]
    documents = [Document(f"{prefix}{i:06d}", text) for i, text in enumerate(kept)]
    return documents, drops, stage_count(STAGE_SENTENCES, "sentences", len(candidates), drops)


def finish_collection(
    name: str,
    documents: Sequence[Document],
    drops: Sequence[Drop],
    stages: Sequence[StageCount],
    origin: str,
    parameters: Mapping[str, Any],
    out_dir: Path,
) -> dict[str, Any]:
    """A text collection (not a benchmark: texts only, e.g. for a renormalization mean) with its drops and card."""
    card = {
        "name": name,
        "builder": "text_collection",
        "origin": origin,
        "parameters": dict(parameters),
        "counts": {"texts": len(documents)},
        "stages": [vars(s) for s in stages],
        "use": "estimating mean embeddings for renormalization; disjoint from every evaluated benchmark",
    }
    out = Path(out_dir)
    write_jsonl(out / CORPUS, ({"_id": d.doc_id, "title": d.title, "text": d.text} for d in documents))
    write_drops(out / DROPS, drops)
    write_json(out / CARD, card)
    return card
