"""What the shards cache mode costs (docs/caches.md, "Jobs on several hosts"): a fold in both modes and a read from
shards against the same read from the main file, on a copy of a real cache file.

Not a test: run it by hand and copy the lines into docs/caches.md.

    python perf/cache_fold_speed.py results/embedding-cache.sqlite [--shards 10] [--per-shard 4096]

The file is copied first (the original is never written). Each fold adds ``--shards`` shards of ``--per-shard``
new 384-d float32 vectors; then the same number of vectors is read once from shards (shards mode) and once from
the main file after a fold (single mode).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from posir.cache_shards import fold
from posir.cache_store import CacheStore
from posir.embedding_cache import EMBEDDING_CACHE


def write_shards(path: Path, shards: int, per_shard: int, tag: str) -> list[tuple[str]]:
    draw = np.random.default_rng(abs(hash(tag)) % 2**32)
    keys = []
    with CacheStore(path, EMBEDDING_CACHE, mode="shards") as store:
        for shard in range(shards):
            rows = [
                ((f"{tag}-{shard}-{i}",), (9, draw.standard_normal(384).astype(np.float32).tobytes()))
                for i in range(per_shard)
            ]
            store.put_many("embeddings", rows)
            store.flush()
            keys += [key for key, _ in rows]
    return keys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cache", type=Path, help="an embedding cache file (copied, never written)")
    parser.add_argument("--shards", type=int, default=10)
    parser.add_argument("--per-shard", type=int, default=4096)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / args.cache.name
        shutil.copy(args.cache, path)
        print(f"{args.cache}: {path.stat().st_size / 1e6:.0f} MB; {args.shards} shards of {args.per_shard} vectors")
        for mode in ("shards", "single"):
            write_shards(path, args.shards, args.per_shard, f"fold-{mode}")
            start = time.perf_counter()
            report = fold(path, EMBEDDING_CACHE, mode=mode)
            print(f"fold, {mode} mode: {time.perf_counter() - start:.1f} s ({report.summary()})")
        keys = write_shards(path, args.shards, args.per_shard, "read")
        for mode in ("shards", "single"):
            if mode == "single":
                fold(path, EMBEDDING_CACHE, mode="single")
            with CacheStore(path, EMBEDDING_CACHE, mode=mode) as store:
                start = time.perf_counter()
                found = store.get_many("embeddings", keys)
                elapsed = time.perf_counter() - start
            where = "from the shards" if mode == "shards" else "from the main file"
            print(f"read {len(found)} vectors {where}: {elapsed:.2f} s")


if __name__ == "__main__":
    main()
