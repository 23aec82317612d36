"""Throughput of the apertium backend: null-flush batches against one ``apertium -u`` call per text.

Not a test: run it by hand on an idle machine and copy the figures into docs/performance.md.

    python perf/apertium_throughput.py [--squad $POSIR_MIRROR/squad/dev-v1.1.json] [--chunk 200]

1. Batched: every SQuAD v1.1 dev paragraph and question through
   ``posir.translate.apertium.Apertium.translate_batch`` in batches of ``--chunk``
   texts (no cache), as the translate_benchmark rule does on a cold cache.
2. One call per text: ``apertium -u eng-spa`` on the first ``--single`` texts,
   the way a naive wrapper would call it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from pathlib import Path

from posir.sources import MIRROR_ENV
from posir.translate.apertium import Apertium

#: the first mirror directory (as the workflow reads POSIR_MIRROR), else ../shared/data
MIRROR = Path(os.environ.get(MIRROR_ENV, "").split(os.pathsep)[0] or "../shared/data")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--squad", type=Path, default=MIRROR / "squad" / "dev-v1.1.json")
    parser.add_argument("--pair", default="eng-spa")
    parser.add_argument("--chunk", type=int, default=200)
    parser.add_argument("--single", type=int, default=40)
    args = parser.parse_args()
    data = json.loads(args.squad.read_text(encoding="utf-8"))
    units = {
        "paragraphs": [p["context"] for a in data["data"] for p in a["paragraphs"]],
        "questions": [q["question"].strip() for a in data["data"] for p in a["paragraphs"] for q in p["qas"]],
    }
    engine = Apertium(args.pair)
    print("| texts | n | words | seconds | words/s | chars/s |\n|---|---:|---:|---:|---:|---:|")
    total = 0.0
    for name, texts in units.items():
        start = time.perf_counter()
        for i in range(0, len(texts), args.chunk):
            engine.translate_batch(texts[i : i + args.chunk])
        seconds = time.perf_counter() - start
        total += seconds
        words, chars = sum(len(t.split()) for t in texts), sum(len(t) for t in texts)
        print(
            f"| {name} (batched) | {len(texts)} | {words} | {seconds:.1f} | "
            f"{words / seconds:,.0f} | {chars / seconds:,.0f} |"
        )
    texts = units["paragraphs"][: args.single]
    start = time.perf_counter()
    for text in texts:
        subprocess.run(["apertium", "-u", args.pair], input=text.encode(), capture_output=True, check=True)
    seconds = time.perf_counter() - start
    words, chars = sum(len(t.split()) for t in texts), sum(len(t) for t in texts)
    print(
        f"| paragraphs (one call each) | {len(texts)} | {words} | {seconds:.1f} | "
        f"{words / seconds:,.0f} | {chars / seconds:,.0f} |"
    )
    print(f"\nall of SQuAD v1.1 dev, batched: {total:.1f} s")


if __name__ == "__main__":
    main()
