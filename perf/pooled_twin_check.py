"""The pooled vectors an unpooled token-vector pass gives, against the dense entry's own, bit for bit.

An unpooled entry's encode job also files the pooled vector of every text it encodes under the identity of the dense
entry that reads the same weights alike (posir.models.registry.one_pass_twins), so that entry's job finds them
cached. That is only right if the two ways give the same bytes. For a seeded sample of a run's texts (both roles),
this encodes them through the unpooled entry's pass in groups of a size other than the run's and compares each
pooled vector with the one the dense entry's encode job cached in that run (and, for texts the sample holds in
several group sizes, with itself).

    cd <a finished run> && python -m perf.pooled_twin_check --unpooled me5-small-tokens --dense me5-small \\
        --text-set squad-long --sample 200

Prints one JSON line per role: texts compared, found in the cache, equal bytes, the largest difference.
Not a test: it reads a finished run's cache (``results/embedding-cache.sqlite``) and its converted weights.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import numpy as np
import yaml

from posir.benchmark import read_jsonl
from posir.embedding_cache import EmbeddingCache
from posir.models.identity import text_key, whole_text_identity
from posir.models.registry import load_encoder, one_pass_twins
from posir.plan import Plan

FILES = {"query": "queries.jsonl", "document": "corpus.jsonl"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="config.yaml")
    parser.add_argument("--unpooled", required=True)
    parser.add_argument("--dense", required=True)
    parser.add_argument("--text-set", required=True)
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--group", type=int, default=5, help="texts per call (the run's batches are larger)")
    args = parser.parse_args()

    config = Plan.from_config(yaml.safe_load(Path(args.config).read_text()), Path("prompts")).retrieval.config
    unpooled, dense = config.models[args.unpooled], config.models[args.dense]
    twin = one_pass_twins(unpooled).get("dense")
    identity = whole_text_identity(dense)
    assert twin is not None and whole_text_identity(twin) == identity, "the entries do not read the weights alike"
    encoder = load_encoder(unpooled, threads=1)
    cache = EmbeddingCache(Path("results/embedding-cache.sqlite"))
    for role, filename in FILES.items():
        texts = [record["text"] for record in read_jsonl(Path("results/benchmarks") / args.text_set / filename)]
        sample = random.Random(0).sample(texts, min(args.sample, len(texts)))
        pooled = np.concatenate(
            [
                encoder.encode_outputs(sample[i : i + args.group], role)["dense"]
                for i in range(0, len(sample), args.group)
            ]
        )
        alone = encoder.encode_outputs(sample[:3], role)["dense"]  # the first three again, in a group of three
        keys = [text_key(identity, role, text) for text in sample]
        cached = cache.get_many(keys)
        found = [i for i, key in enumerate(keys) if key in cached]
        equal = sum(cached[keys[i]][0].tobytes() == pooled[i].tobytes() for i in found)
        largest = max((float(np.abs(cached[keys[i]][0] - pooled[i]).max()) for i in found), default=0.0)
        regrouped = bool(alone.tobytes() == pooled[:3].tobytes())
        print(json.dumps({"role": role, "texts": len(sample), "cached": len(found), "equal_bytes": equal,
                          "largest_difference": largest, "same_in_other_groups": regrouped}))  # fmt: skip
    cache.close()


if __name__ == "__main__":
    main()
