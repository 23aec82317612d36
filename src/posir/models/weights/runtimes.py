"""Where a sentence-transformers model's forward pass runs: torch, ONNX Runtime or OpenVINO.

A dense entry's ``runtime`` picks it (``torch``, the default, is sentence-transformers itself). For
``onnx`` and ``openvino`` the model's modules up to its ``Normalize`` (transformer and pooling) are
exported once to an ONNX graph with dynamic batch and sequence axes (``torch.onnx.export``); ONNX
Runtime runs that graph, OpenVINO compiles the same file. ``quantize: int8`` (ONNX only) rewrites the
graph's MatMuls to dynamic int8, weights per output channel (``onnxruntime.quantization.quantize_dynamic``):
quantizing the embedding lookups too, ONNX Runtime's default, costs MiniLM 0.05 of cosine to fp32 on
SQuAD paragraphs (mean 0.946) where MatMuls alone cost 0.006 (mean 0.994; ``perf/runtime_speed.py``).

Why not sentence-transformers' own ``backend="onnx"``: it needs optimum, whose extra pins transformers
4.57 (this project runs 5.23) and breaks ``datasets``; torch's exporter and ONNX Runtime's quantizer
are what optimum calls underneath.

An exported file is built once per model entry (the ``export_model`` rule) and carries a sidecar
``.json`` with its :func:`export_identity`; a file whose identity no longer matches (another package
version, another entry) is exported again before use, never silently reused.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np

from posir.atomic_files import atomic_file, scratch_folder
from posir.models.declarations.spec import ModelSpec
from posir.models.weights.conversion import conversion_identity
from posir.models.weights.versions import installed_version

logger = logging.getLogger("posir")

Runtime = Literal["torch", "onnx", "openvino"]
#: Runtimes that run an exported graph instead of the torch modules.
EXPORTED_RUNTIMES = ("onnx", "openvino")
#: Packages whose versions shape an exported graph or how it runs.
_EXPORT_PACKAGES = ("torch", "transformers", "sentence-transformers", "onnx")
_RUNTIME_PACKAGES = {"onnx": "onnxruntime", "openvino": "openvino"}
ONNX_OPSET = 17


def runtime_packages(spec: ModelSpec) -> list[str]:
    """The distributions whose versions shape ``spec``'s vectors beyond the backend's own (embedding cache key)."""
    if spec.runtime not in EXPORTED_RUNTIMES:
        return []
    return [*_EXPORT_PACKAGES, _RUNTIME_PACKAGES[spec.runtime]]


def export_identity(spec: ModelSpec, model_path: str) -> str:
    """What an exported file depends on: the weights, the export recipe and the exporting packages' versions."""
    described = {
        "model": model_path,
        "model_package": spec.model_package and f"{spec.model_package}=={installed_version(spec.model_package)}",
        "converted": spec.is_converted and conversion_identity(str(spec.model_package)),
        "quantize": spec.quantize,
        "opset": ONNX_OPSET,
        "versions": {p: installed_version(p) for p in (*_EXPORT_PACKAGES, "onnxruntime")},
        "recipe": 2,  # raise when the export or quantization code below changes what it writes
    }
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()


def _sidecar(path: Path) -> Path:
    return path.with_suffix(".json")


def exported_graph(st_model: Any, spec: ModelSpec, model_path: str, path: Path) -> Path:
    """``path`` holding ``spec``'s exported (and quantized) graph, exported now if missing or stale."""
    identity = export_identity(spec, model_path)
    sidecar = _sidecar(path)
    if path.exists() and sidecar.exists():
        recorded = json.loads(sidecar.read_text(encoding="utf-8")).get("identity")
        if recorded == identity:
            return path
        logger.warning("%s: exported by other packages or another entry; exporting it again", path)
    export_graph(st_model, spec, model_path, path)
    return path


def export_graph(st_model: Any, spec: ModelSpec, model_path: str, path: Path) -> dict[str, Any]:
    """Export ``st_model``'s modules before ``Normalize`` to ``path`` (atomically), int8-quantized if asked."""
    import torch
    from sentence_transformers.models import Normalize

    start = time.monotonic()
    path.parent.mkdir(parents=True, exist_ok=True)
    modules = torch.nn.Sequential(*[m for m in st_model if not isinstance(m, Normalize)]).cpu().float().eval()
    names = _input_names(st_model.tokenizer)
    probe = _features(st_model, ["a probe", "a longer probe text"])
    wrapped = _positional_module(modules, names)
    with scratch_folder(path) as work:
        graph = work / "model.onnx"
        with torch.inference_mode(), warnings.catch_warnings():
            # the tracer's notes on Python branches it froze: the outputs are checked against torch's instead
            # (tests/reference/test_runtimes.py), so they only clutter the export's log
            warnings.simplefilter("ignore")
            torch.onnx.export(
                wrapped,
                tuple(torch.as_tensor(probe[n]) for n in names),
                str(graph),
                input_names=list(names),
                output_names=["sentence_embedding"],
                dynamic_axes={**{n: {0: "batch", 1: "sequence"} for n in names}, "sentence_embedding": {0: "batch"}},
                opset_version=ONNX_OPSET,
                dynamo=False,  # the TorchScript exporter: dynamic axes without onnxscript
            )
        if spec.quantize == "int8":
            from onnxruntime.quantization import QuantType, quantize_dynamic

            quantized = work / "model.int8.onnx"
            quantize_dynamic(
                str(graph),
                str(quantized),
                weight_type=QuantType.QInt8,
                op_types_to_quantize=["MatMul"],
                per_channel=True,
            )
            graph = quantized
        os.replace(graph, path)
    record = {
        "identity": export_identity(spec, model_path),
        "model": spec.name,
        "source": model_path,
        "quantize": spec.quantize,
        "inputs": list(names),
        "seconds": round(time.monotonic() - start, 1),
        "bytes": path.stat().st_size,
    }
    with atomic_file(_sidecar(path)) as partial:
        partial.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    logger.info("exported %s to %s in %.1f s (%d MB)", spec.name, path, record["seconds"], record["bytes"] >> 20)
    return record


def _positional_module(modules: Any, names: tuple[str, ...]) -> Any:
    """The modules as a function of positional tensors, which is what the exporter traces."""
    import torch

    class PositionalForward(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = modules

        def forward(self, *tensors: Any) -> Any:
            return self.inner(dict(zip(names, tensors)))["sentence_embedding"]

    return PositionalForward().eval()


def _input_names(tokenizer: Any) -> tuple[str, ...]:
    names = ["input_ids", "attention_mask"]
    if "token_type_ids" in tokenizer.model_input_names:
        names.append("token_type_ids")
    return tuple(names)


def _features(st_model: Any, texts: list[str]) -> Mapping[str, Any]:
    """Tokenized, truncated and padded inputs as sentence-transformers builds them."""
    preprocess = getattr(st_model, "preprocess", None) or st_model.tokenize
    return preprocess(texts)


class ExportedForward:
    """The exported graph, run by ONNX Runtime or compiled by OpenVINO on the CPU with ``threads`` threads."""

    def __init__(self, path: Path, runtime: str, threads: int | None) -> None:
        self.runtime = runtime
        record = json.loads(_sidecar(path).read_text(encoding="utf-8"))
        self.names = tuple(record["inputs"])
        if runtime == "onnx":
            import onnxruntime as ort

            options = ort.SessionOptions()
            if threads:
                options.intra_op_num_threads = threads
                options.inter_op_num_threads = 1
            options.log_severity_level = 3
            session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
            self._run = lambda feed: session.run(None, feed)[0]
        elif runtime == "openvino":
            import openvino as ov

            config: dict[str, Any] = {"INFERENCE_PRECISION_HINT": "f32"}
            if threads:
                config["INFERENCE_NUM_THREADS"] = threads
            compiled = ov.Core().compile_model(str(path), "CPU", config)
            self._run = lambda feed: compiled(feed)[0]
        else:
            raise ValueError(f"runtime '{runtime}' runs no exported graph; use one of {list(EXPORTED_RUNTIMES)}")

    def __call__(self, features: Mapping[str, Any]) -> np.ndarray:
        """Pooled (not normalized) vectors of a batch of tokenized inputs."""
        feed = {name: np.asarray(_numpy(features[name]), dtype=np.int64) for name in self.names}
        return np.asarray(self._run(feed), dtype=np.float32)


def _numpy(value: Any) -> Any:
    return value.cpu().numpy() if hasattr(value, "cpu") else value
