"""The encoding service: a model entry's texts in, their vectors out, through the embedding cache.

Whatever turns texts into the vectors of a ``models:`` entry and keeps them asks one :class:`EncodingService`
per job: the encode rule (texts read whole, and a chunked entry's windows), the bi-encoder scorer of reranking
pipelines and generation quality control (windows), the representation analysis and ``posir.tools.gpu_encode``.
For its job the service owns

* the cache connection: the embedding cache file is opened once and closed with the service (in the ``shards``
  mode: one shard of new values per job, besides the periodic flushes of a long one);
* the encoding identity its texts are keyed under (:mod:`posir.models.identity`), computed once, and that of the
  keys of before (:mod:`posir.models.legacy_keys`): a value the cache holds only under the latter is copied to
  today's key when first asked for, so an upgrade that changes no vector encodes nothing again;
* the encoder (:func:`posir.models.registry.load_encoder`), loaded only when a text misses the cache. The
  tokenizer work of windows (a model's budget, window spans) runs on that encoder once it is loaded, else on the
  entry's CPU copy (:meth:`~posir.models.declarations.spec.ModelSpec.on_cpu`): a job whose windows are all cached loads
  nothing onto a GPU and can run where there is none.

What it returns is what an uncached encode gives, byte for byte: texts are encoded once each in
length-homogeneous groups (:func:`posir.models.registry.encode_by_length`), so a text's vector does not depend
on what the cache held, and the cache's keys are the content-addressed keys of :mod:`posir.embedding_cache`. A
text a ``truncate`` entry reads to its limit is also keyed by the token ids the model reads of it (its encoder's
``cut_inputs``): those ids are all the model sees, and a full-length group needs no padding, so a text cut to the
same ids (a controlled variant's document, changed only past the limit) takes that vector instead of an encode.

A multi-vector or sparse entry (``output``, docs/late-interaction.md) is encoded the same way into rows of token
vectors or sparse vectors (:class:`EncodedRows`), kept in the token-vector cache beside the embedding cache
(:mod:`posir.token_cache`); its window spans and budgets are in the embedding cache like a dense entry's. Where one
pass gives the texts of other entries too (:func:`posir.models.registry.one_pass_twins`: BGE-M3's outputs; the pooled
vectors of the dense entry that reads an unpooled entry's weights alike), every output is filed where its entry
reads it, and that entry encodes nothing of them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, partial
from pathlib import Path
from typing import Any, Literal

import numpy as np

from posir.cache_store import CacheCounts
from posir.embedding_cache import EmbeddingCache
from posir.models.declarations.outputs import DENSE, MULTI_VECTOR, SPARSE
from posir.models.declarations.spec import ModelSpec
from posir.models.identity import encoding_identity, text_key, whole_text_identity, window_identity
from posir.models.legacy_keys import legacy_identity
from posir.models.rows import Row
from posir.progress import Progress

Keying = Literal["whole_text", "window", "entry"]

#: The identity a service keys its texts under, by what the texts are to the model.
IDENTITIES: dict[str, Callable[[ModelSpec], str]] = {
    # the encode rule: the entry's texts as it reads them whole (a chunked entry's queries and windows: a window's)
    "whole_text": whole_text_identity,
    # passage scorers: every text is a window the model reads whole, shared with the chunked entry of the model
    "window": window_identity,
    # the entry's own encoding, chunked or not (the representation analysis embeds documents and their segments)
    "entry": encoding_identity,
}
#: The same identities as the keys of before named them (posir.models.legacy_keys): a value found only under one is
#: copied to today's key, once.
EARLIER_IDENTITIES: dict[str, Callable[[ModelSpec], str | None]] = {
    "whole_text": lambda spec: whole_text_identity(spec, legacy_identity),
    "window": lambda spec: window_identity(spec, legacy_identity),
    "entry": legacy_identity,
}

#: What a cut input's key is made of before its token ids: no text key's text starts so (posir.models.identity)
CUT_INPUT = "\0model input ids\0"
ENCODE_CHUNK = 4096  # texts encoded between cache commits: a killed job keeps what it finished
ROWS_CHUNK = 512  # the same for token and sparse vectors, whose texts are the long ones (documents, windows)


@dataclass(frozen=True)
class Encoded:
    """Vectors (one float32 row per text, in order), the input tokens the model read per text, and how many of the
    texts the cache served."""

    vectors: np.ndarray
    input_tokens: list[int]
    from_cache: int

    @property
    def encoded(self) -> int:
        return len(self.input_tokens) - self.from_cache


@dataclass(frozen=True)
class EncodedRows:
    """A multi-vector or sparse entry's rows (:class:`~posir.models.rows.TokenVectors` or
    :class:`~posir.models.rows.TermWeights`, one per text, in order) and how many the cache served."""

    rows: list[Row]
    from_cache: int

    @property
    def input_tokens(self) -> list[int]:
        return [row.input_tokens for row in self.rows]

    @property
    def encoded(self) -> int:
        return len(self.rows) - self.from_cache


@dataclass(frozen=True)
class Windows:
    """Each text's window spans (character offsets) and the vectors (or rows) of the windows encoded, text after
    text."""

    spans: list[list[tuple[int, int]]]
    encoded: Encoded | EncodedRows


class ReportingEncoder:
    """An encoder that reports each encoded group to a :class:`~posir.progress.Progress` (the rule's log says how
    far a long encode job is); it adds no computation, so the vectors are the wrapped encoder's own."""

    def __init__(self, encoder: Any, progress: Progress) -> None:
        self._encoder, self._progress = encoder, progress

    def encode(self, texts: Sequence[str], role: str) -> Any:
        vectors = self._encoder.encode(texts, role)
        self._progress.advance(len(texts))
        return vectors

    def __getattr__(self, name: str) -> Any:
        return getattr(self._encoder, name)


class EncodingService:
    """One model entry's encoding through the embedding cache for one job (see the module's docstring).

    ``cache_path`` None encodes everything and keeps nothing. ``threads`` caps the encoder's CPU threads;
    ``exported`` is the graph of a ``runtime: onnx | openvino`` entry (the ``export_model`` rule's);
    ``keyed`` picks the identity (:data:`IDENTITIES`); ``encoder``, an encoder of this entry already loaded
    (one model serving several services: a tool timing each, a test), is used instead of loading one.
    Use it as a context manager, or :meth:`close` it.
    """

    def __init__(
        self,
        spec: ModelSpec,
        cache_path: str | Path | None = None,
        *,
        threads: int | None = None,
        exported: Path | None = None,
        keyed: Keying = "whole_text",
        encoder: Any = None,
    ) -> None:
        self.spec = spec
        self.threads = threads
        self.exported = exported
        self.identity = IDENTITIES[keyed](spec)
        earlier = EARLIER_IDENTITIES[keyed](spec)
        #: the identity of the keys of before, where it differs: a value found only under it is moved to today's
        self.earlier_identity = earlier if earlier != self.identity else None
        #: values found under the keys of before and copied to today's keys
        self.moved = 0
        #: texts whose vector was found under the input the model reads of them, another text's cut to it
        self.shared_cut = 0
        self.cache_path = Path(cache_path) if cache_path else None
        self._encoder = encoder
        self._tokenizing: Any = None

    # --- the caches, opened when first asked (a job whose texts are all in a cache loads no model)

    @cached_property
    def _cache(self) -> EmbeddingCache | None:
        return EmbeddingCache(self.cache_path) if self.cache_path is not None else None

    @cached_property
    def _twins(self) -> dict[str, ModelSpec]:
        """The entries whose texts one pass of this entry's encoder also encodes, by output (BGE-M3's; the pooled
        reading of an unpooled entry)."""
        from posir.models.registry import one_pass_twins

        return one_pass_twins(self.spec)

    @cached_property
    def _rows_cache(self) -> Any:
        """The token-vector cache, where this entry keeps rows (or its pass keeps another entry's)."""
        if self.cache_path is None or (self.spec.is_dense and not self._twins):
            return None
        from posir.token_cache import TokenCache, token_cache_path

        return TokenCache(token_cache_path(self.cache_path))

    def _opened(self) -> list[Any]:
        """The caches this service opened."""
        return [self.__dict__[name] for name in ("_cache", "_rows_cache") if self.__dict__.get(name) is not None]

    # --- the encoder, loaded when a text misses the cache

    @property
    def encoder(self) -> Any:
        """The entry's encoder, loaded the first time it is needed."""
        if self._encoder is None:
            from posir.models.registry import loaded_encoder

            self._encoder = loaded_encoder(self.spec, self.threads, self.exported)
        return self._encoder

    def _windowing(self) -> Any:
        """What reads the tokenizer for windows: the encoder once loaded, a GPU entry's CPU copy before that."""
        if self._encoder is not None or not self.spec.uses_gpu:
            return self.encoder
        if self._tokenizing is None:
            from posir.models.registry import loaded_encoder

            self._tokenizing = loaded_encoder(self.spec.on_cpu(), self.threads, self.exported)
        return self._tokenizing

    # --- texts read whole

    def encode(self, texts: Sequence[str], role: str) -> Any:
        """Vectors and input-token counts of ``texts``, and how many came from the cache (:class:`Encoded`; for a
        multi-vector or sparse entry its rows, :class:`EncodedRows`).

        Only texts this encoding has not embedded before are encoded (once each, in length-homogeneous groups),
        committed every :data:`ENCODE_CHUNK` texts; a stored vector found corrupt is encoded again like a miss.
        """
        if not self.spec.is_dense:
            return self.encode_rows(texts, role)
        from posir.models.registry import encode_by_length

        texts = list(texts)
        if self._cache is None:
            model = self.encoder
            tokens = model.input_tokens(texts, role)
            return Encoded(encode_by_length(model, texts, role, tokens), list(tokens), 0)
        cache = self._cache
        keys = [text_key(self.identity, role, text) for text in texts]
        dim = self._dimension()
        found = cache.get_many(keys, dim=dim)
        if self.earlier_identity is not None and len(found) < len(keys):
            found.update(self._earlier_vectors(keys, texts, role, found, dim))
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        text_of = dict(zip(keys, texts))
        missing, cut_keys = self._take_cut_inputs(missing, text_of, role, found, lambda k: cache.get_many(k, dim=dim))
        from_cache = sum(k in found for k in keys)
        if missing:
            progress = Progress(f"encoding {role} texts", len(missing))
            model = ReportingEncoder(self.encoder, progress)
            # one pass gives the other outputs' rows too, which are kept: chunks of rows, as a row entry's
            one_pass = hasattr(self.encoder, "encode_outputs")
            step = ROWS_CHUNK if one_pass else ENCODE_CHUNK
            for start in range(0, len(missing), step):
                chunk = missing[start : start + step]
                chunk_texts = [text_of[k] for k in chunk]
                tokens = model.input_tokens(chunk_texts, role)
                if one_pass:
                    vectors = self._encode_outputs_and_store(chunk_texts, role)[DENSE]
                    progress.advance(len(chunk))
                else:
                    vectors = encode_by_length(model, chunk_texts, role, tokens)
                if dim is None:
                    dim = int(np.asarray(vectors).shape[-1])
                    cache.set_dimension(self.identity, dim)
                cache.put_many(chunk, vectors, tokens)
                cut = [i for i, k in enumerate(chunk) if k in cut_keys]
                if cut:  # also under the input the model read, for the next text cut to it
                    cache.put_many(
                        [cut_keys[chunk[i]] for i in cut], np.asarray(vectors)[cut], [tokens[i] for i in cut]
                    )
                found.update((k, (np.asarray(v, dtype=np.float32), int(t))) for k, v, t in zip(chunk, vectors, tokens))
        matrix = np.stack([found[k][0] for k in keys]) if keys else np.zeros((0, 0), dtype=np.float32)
        return Encoded(matrix, [found[k][1] for k in keys], from_cache)

    def _take_cut_inputs(
        self,
        missing: list[str],
        text_of: dict[str, str],
        role: str,
        found: dict[str, Any],
        lookup: Callable[[list[str]], dict[str, Any]],
    ) -> tuple[list[str], dict[str, str]]:
        """The keys still missing once each text cut to an input already stored (``lookup``: keys -> values) has
        taken that value into ``found``, and the cut-input key of every missing text the model reads to its limit
        (where the encode stores it too)."""
        cut_keys = self._cut_input_keys(missing, text_of, role) if missing else {}
        if not cut_keys:
            return missing, cut_keys
        shared = lookup(list(set(cut_keys.values())))
        found.update((k, shared[c]) for k, c in cut_keys.items() if c in shared)
        still = [k for k in missing if k not in found]
        self.shared_cut += len(missing) - len(still)
        return still, cut_keys

    def _cut_input_keys(self, keys: Sequence[str], text_of: dict[str, str], role: str) -> dict[str, str]:
        """Today's key -> the key of the input the model reads, for the texts it reads to its limit
        (``cut_inputs`` of the encoder: the same ids, the same vector). Only a ``truncate`` entry reads texts so."""
        if self.spec.effective_long_input != "truncate":
            return {}
        cut_inputs = getattr(self.encoder, "cut_inputs", None)  # the texts missed: the encoder is needed anyway
        if cut_inputs is None:
            return {}
        read = cut_inputs([text_of[k] for k in keys], role)
        return {
            key: text_key(self.identity, role, CUT_INPUT + model_input)
            for key, model_input in zip(keys, read)
            if model_input is not None
        }

    def _dimension(self) -> int | None:
        """The vector length recorded for this identity (or, once, for the keys of before)."""
        dim = self._cache.dimension(self.identity)
        if dim is None and self.earlier_identity is not None:
            dim = self._cache.dimension(self.earlier_identity)
            if dim is not None:
                self._cache.set_dimension(self.identity, dim)
        return dim

    def _earlier(self, keys: Sequence[str], texts: Sequence[str], role: str, found: Any) -> dict[str, str]:
        """The keys of before of the texts not found, to today's key of each."""
        assert self.earlier_identity is not None
        return {text_key(self.earlier_identity, role, t): k for k, t in zip(keys, texts) if k not in found}

    def _earlier_vectors(
        self, keys: Sequence[str], texts: Sequence[str], role: str, found: Any, dim: int | None
    ) -> dict[str, tuple[np.ndarray, int]]:
        """Vectors of the texts not found that the cache holds under the keys of before, copied to today's keys."""
        earlier = self._earlier(keys, texts, role, found)
        got = self._cache.get_many(earlier, dim=dim)
        if got:
            moved = list(got)
            self._cache.put_many(
                [earlier[k] for k in moved], np.stack([got[k][0] for k in moved]), [got[k][1] for k in moved]
            )
            self.moved += len(moved)
        return {earlier[k]: value for k, value in got.items()}

    def encode_rows(self, texts: Sequence[str], role: str) -> EncodedRows:
        """A multi-vector or sparse entry's rows of ``texts``, through the token-vector cache as :meth:`encode`."""
        texts = list(texts)
        if self._rows_cache is None:
            return EncodedRows(list(self.encoder.encode_rows(texts, role)), 0)
        keys = [text_key(self.identity, role, text) for text in texts]
        found: dict[str, Row] = self._rows_cache.get_many(keys, self.spec.is_sparse)
        if self.earlier_identity is not None and len(found) < len(keys):
            earlier = self._earlier(keys, texts, role, found)
            got = self._rows_cache.get_many(list(earlier), self.spec.is_sparse)
            if got:
                self._rows_cache.put_many([earlier[k] for k in got], list(got.values()))
                self.moved += len(got)
            found.update({earlier[k]: row for k, row in got.items()})
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        text_of = dict(zip(keys, texts))
        rows_of = partial(self._rows_cache.get_many, sparse=self.spec.is_sparse)
        missing, cut_keys = self._take_cut_inputs(missing, text_of, role, found, rows_of)
        from_cache = sum(k in found for k in keys)
        if missing:
            progress = Progress(f"encoding {role} texts", len(missing))
            for start in range(0, len(missing), ROWS_CHUNK):
                chunk = missing[start : start + ROWS_CHUNK]
                rows = self._encode_and_store([text_of[k] for k in chunk], chunk, role, progress.advance)
                cut = [(cut_keys[k], row) for k, row in zip(chunk, rows) if k in cut_keys]
                if cut:  # also under the input the model read, for the next document cut to it
                    self._rows_cache.put_many([key for key, _ in cut], [row for _, row in cut])
                found.update(zip(chunk, rows))
        return EncodedRows([found[k] for k in keys], from_cache)

    def _encode_and_store(
        self, texts: list[str], keys: list[str], role: str, on_batch: Callable[[int], None] | None = None
    ) -> list[Row]:
        """The entry's rows of ``texts``, cached under ``keys``; an encoder whose one pass gives several outputs
        (``encode_outputs``: BGE-M3, an unpooled entry) has every output cached (:meth:`_encode_outputs_and_store`)."""
        if not hasattr(self.encoder, "encode_outputs"):
            rows = list(self.encoder.encode_rows(texts, role, on_batch))
            self._rows_cache.put_many(keys, rows)
            return rows
        return list(self._encode_outputs_and_store(texts, role, on_batch)[self.spec.output])

    def _encode_outputs_and_store(
        self, texts: list[str], role: str, on_batch: Callable[[int], None] | None = None
    ) -> dict[str, Any]:
        """Every output of one pass over ``texts`` (BGE-M3's; an unpooled entry's rows and pooled vectors), each
        cached where the entry of that output reads it: the rows of the row outputs in the token-vector cache under
        their shared identity (:func:`posir.models.identity.identity_dump`), the dense vectors in the embedding cache
        under the identity of the dense entry of the same keys (and of the texts read to the limit, under their cut
        input too, where the encoder gives it: ``pooled_cut_inputs``), so an entry of another output reads this pass
        from the cache. A dense entry's own vectors are left to the caller to cache."""
        outputs = self.encoder.encode_outputs(texts, role, on_batch)
        if self.spec.is_dense:
            twin = self._twins.get(MULTI_VECTOR)
            rows_identity = whole_text_identity(twin) if twin is not None else None
        else:
            rows_identity = self.identity
        if rows_identity is not None and self._rows_cache is not None:
            keys = [text_key(rows_identity, role, text) for text in texts]
            row_outputs = [output for output in (MULTI_VECTOR, SPARSE) if output in outputs]
            self._rows_cache.put_many(keys * len(row_outputs), [row for o in row_outputs for row in outputs[o]])
        dense = self._twins.get(DENSE)
        if dense is not None and self._cache is not None:
            identity = whole_text_identity(dense)
            assert identity is not None
            if self._cache.dimension(identity) is None:
                self._cache.set_dimension(identity, int(outputs[DENSE].shape[1]))
            keys = [text_key(identity, role, text) for text in texts]
            tokens = self.encoder.input_tokens(texts, role)
            self._cache.put_many(keys, outputs[DENSE], tokens)
            cut_inputs = getattr(self.encoder, "pooled_cut_inputs", None)
            cut = [] if cut_inputs is None else list(enumerate(cut_inputs(texts, role)))
            cut = [(i, text_key(identity, role, CUT_INPUT + read)) for i, read in cut if read is not None]
            if cut:
                self._cache.put_many(
                    [key for _, key in cut],
                    np.asarray(outputs[DENSE])[[i for i, _ in cut]],
                    [tokens[i] for i, _ in cut],
                )
        return outputs

    def store(self, texts: Sequence[str], role: str, vectors: np.ndarray, input_tokens: Sequence[int]) -> None:
        """File vectors of ``texts`` encoded elsewhere (``posir.tools.gpu_encode``: this entry on a lent GPU) under
        this service's identity, where :meth:`encode` would have filed them; every later read checks them as it
        checks any stored vector."""
        if self._cache is None:
            raise ValueError(f"model '{self.spec.name}': a service without an embedding cache has nowhere to store")
        vectors = np.asarray(vectors, dtype=np.float32)
        recorded = self._cache.dimension(self.identity)
        if recorded is not None and recorded != vectors.shape[1]:
            raise ValueError(
                f"{self.cache_path}: model '{self.spec.name}' encodes {recorded} floats a vector, not "
                f"{vectors.shape[1]}; these vectors are of another encoding"
            )
        if recorded is None:
            self._cache.set_dimension(self.identity, int(vectors.shape[1]))
        self._cache.put_many([text_key(self.identity, role, text) for text in texts], vectors, input_tokens)

    # --- windows: texts cut into what one pass of the model reads

    def window_budget(self, role: str) -> int | None:
        """The text tokens one pass of the model holds for ``role`` (the encoder's ``window_budget``), kept in the
        cache: looking cached windows up needs the window size, which needs this number, so a job whose windows
        are all cached loads no model for it. ``None`` (a model without a limit) is not kept."""
        if self._cache is None:
            return self._windowing().window_budget(role)
        budget = self._cache.window_budget(self.identity, role)
        if budget is None and self.earlier_identity is not None:
            budget = self._cache.window_budget(self.earlier_identity, role)
            if budget is not None:
                self._cache.set_window_budget(self.identity, role, budget)
        if budget is None:
            budget = self._windowing().window_budget(role)
            if budget is not None:
                self._cache.set_window_budget(self.identity, role, budget)
        return budget

    def window_size(
        self, role: str, window_tokens: int | None, stride_tokens: int | None, where: str
    ) -> tuple[int, int]:
        """(window, stride) in tokens: the configured ones, by default the model's budget and half a window
        (:func:`posir.windows.window_size`); an error names ``<where>.<key>``."""
        from posir.windows import window_size

        return window_size(self.window_budget(role), window_tokens, stride_tokens, where)

    def window_spans(self, texts: Sequence[str], role: str, window: int, stride: int) -> list[list[tuple[int, int]]]:
        """Each text's window spans (the encoder's ``window_spans``), kept in the cache beside the embeddings.

        Engines that only count tokens find window ends by search (posir.windows.count_window_spans), which costs
        far more than a known window's embedding lookup: a chunked corpus and every passage scorer reading it
        compute each document's windows once.
        """
        keys = [text_key(self.identity, f"{role}-windows-{window}-{stride}", text) for text in texts]
        if self._cache is None:
            return [self._windowing().window_spans(text, role, window, stride) for text in texts]
        found = self._cache.get_spans(keys)
        if self.earlier_identity is not None and len(found) < len(keys):
            tag = f"{role}-windows-{window}-{stride}"
            earlier = self._earlier(keys, texts, tag, found)
            got = self._cache.get_spans(list(earlier))
            if got:
                self._cache.put_spans({earlier[k]: spans for k, spans in got.items()})
            found.update({earlier[k]: spans for k, spans in got.items()})
        missing = {k: t for k, t in zip(keys, texts) if k not in found}
        if missing:
            computed = {k: self._windowing().window_spans(t, role, window, stride) for k, t in missing.items()}
            self._cache.put_spans(computed)
            found.update(computed)
        return [found[k] for k in keys]

    def encode_windows(
        self, texts: Sequence[str], role: str, window: int, stride: int, *, first_only: bool = False
    ) -> Windows:
        """Each text's windows and their vectors (the first window of each only, with ``first_only``: FirstP)."""
        spans = self.window_spans(texts, role, window, stride)
        kept = [doc_spans[:1] if first_only else doc_spans for doc_spans in spans]
        pieces = [text[start:end] for text, doc_spans in zip(texts, kept) for start, end in doc_spans]
        return Windows(kept, self.encode(pieces, role))

    # --- lifetime

    @property
    def cache_counts(self) -> CacheCounts:
        """The cache's hits, misses and corrupt values dropped since the service opened it."""
        counts = CacheCounts()
        for cache in self._opened():
            counts.add(cache.counts)
        return counts

    def close(self) -> None:
        if self.moved:
            logging.getLogger("posir.encoding").info(
                "model '%s': %d values found under the keys of before (posir.models.legacy_keys), filed under today's",
                self.spec.name,
                self.moved,
            )
        if self.shared_cut:
            logging.getLogger("posir.encoding").info(
                "model '%s': %d texts read to the model's limit as a text encoded before was (the same input ids): "
                "its vector taken, not encoded again",
                self.spec.name,
                self.shared_cut,
            )
        for cache in self._opened():
            cache.close()

    def __enter__(self) -> EncodingService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
