"""Check a collection in the PosIR layout with the workflow's own importer (``posir_import.import_subset``).

For each chosen dataset (``<language folder>/<domain>``) it runs the import the
``import_posir_benchmark`` rule runs (Qwen3 token counts, PosIR's length buckets
with an open Q4, 20 position bins) and reports documents, queries, drops by
reason, queries per length bucket and the seconds the import took.  With
``--cross-lingual`` it also checks PosIR's X->eng pairing (``eval.sh``: the X
folder's queries and qrels against ``eng-Latn``'s corpus): every X query id and
positive id must exist in English, and it imports a temporary folder that pairs
them the same way, to show what ``import_subset`` makes of it.

Exit status 1 if a monolingual dataset loses a query or a document, or if an X
query or positive is missing from English.

Usage::

    PYTHONPATH=src python perf/check_posir_collection.py --root /tmp/posir-synth --sample 12 --cross-lingual
    PYTHONPATH=src python perf/check_posir_collection.py --root /tmp/posir-synth --datasets eng-Latn/game
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from posir.builders.posir_import import ImportSpec, import_subset, reason_counts
from posir.metrics.positions import DEFAULT_BUCKETS, length_buckets
from posir.text import TokenCounter, qwen3_token_counter

BUCKETS = length_buckets(DEFAULT_BUCKETS)  # PosIR: (0,512], (512,1024], (1024,1536], (1536, inf)
N_BINS = 20
ENGLISH = "eng-Latn"


@dataclass(frozen=True)
class Report:
    subset: str
    documents_in: int
    documents: int
    queries_in: int
    queries: int
    drops: dict[str, int]
    buckets: dict[str, int]
    bins_used: int
    seconds: float

    @property
    def clean(self) -> bool:
        return not self.drops and self.documents == self.documents_in and self.queries == self.queries_in

    def line(self) -> str:
        buckets = " ".join(f"{b.name}={self.buckets.get(b.name, 0)}" for b in BUCKETS)
        return (
            f"{self.subset}: documents {self.documents}/{self.documents_in}, queries {self.queries}/"
            f"{self.queries_in}, drops {self.drops or 0}, {buckets}, bins used {self.bins_used}, "
            f"{self.seconds:.2f} s"
        )


def check_subset(root: Path, subset: str, count: TokenCounter) -> Report:
    folder = root / subset
    documents_in = pq.read_metadata(folder / "corpus.parquet").num_rows
    queries_in = pq.read_metadata(folder / "queries.parquet").num_rows
    started = time.perf_counter()
    built = import_subset(ImportSpec.from_config({"path": str(root), "subset": subset}), count, BUCKETS, N_BINS)
    seconds = time.perf_counter() - started
    return Report(
        subset,
        documents_in,
        len(built.documents),
        queries_in,
        len(built.queries),
        reason_counts(built.drops),
        dict(Counter(p.length_bucket for p in built.positions)),
        len({(p.length_bucket, p.position_bin) for p in built.positions}),
        seconds,
    )


def _column(path: Path, name: str) -> set[str]:
    return {str(v) for v in pq.read_table(path, columns=[name]).column(name).to_pylist()}


def check_cross_lingual(root: Path, language_folder: str, domain: str, count: TokenCounter) -> tuple[list[str], Report]:
    """Problems with X->eng (ids missing from English) and the import of the eval.sh pairing."""
    x, en = root / language_folder / domain, root / ENGLISH / domain
    problems: list[str] = []
    missing_queries = _column(x / "queries.parquet", "_id") - _column(en / "queries.parquet", "_id")
    missing_docs = _column(x / "qrels" / "test.parquet", "corpus-id") - _column(en / "corpus.parquet", "_id")
    if missing_queries:
        problems.append(f"{len(missing_queries)} {language_folder} query ids not in {ENGLISH}")
    if missing_docs:
        problems.append(f"{len(missing_docs)} {language_folder} positives not in the {ENGLISH} corpus")
    with tempfile.TemporaryDirectory() as tmp:
        pair = Path(tmp) / f"{language_folder[:3]}-eng" / domain
        (pair / "qrels").mkdir(parents=True)
        (pair / "queries.parquet").symlink_to(x / "queries.parquet")
        (pair / "qrels" / "test.parquet").symlink_to(x / "qrels" / "test.parquet")
        (pair / "corpus.parquet").symlink_to(en / "corpus.parquet")
        report = check_subset(Path(tmp), f"{language_folder[:3]}-eng/{domain}", count)
    return problems, report


def subsets(root: Path) -> list[str]:
    return sorted(
        f"{lang.name}/{domain.name}"
        for lang in root.iterdir()
        if lang.is_dir()
        for domain in lang.iterdir()
        if (domain / "corpus.parquet").is_file()
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--datasets", nargs="+", default=None, help="<language folder>/<domain> (default: --sample)")
    parser.add_argument("--sample", type=int, default=None, help="check this many datasets drawn at random (seeded)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cross-lingual", action="store_true", help="also check X->eng of the translated languages")
    args = parser.parse_args(argv)

    available = subsets(args.root)
    chosen = args.datasets or (
        sorted(random.Random(args.seed).sample(available, min(args.sample, len(available))))
        if args.sample
        else available
    )
    count = qwen3_token_counter()
    failed = False
    for subset in chosen:
        report = check_subset(args.root, subset, count)
        print(report.line())
        failed |= not report.clean
    if args.cross_lingual:
        domains = sorted({s.split("/")[1] for s in chosen})
        for domain in domains:
            for folder in sorted(s.split("/")[0] for s in available if s.endswith(f"/{domain}")):
                if folder in (ENGLISH, "cmn-Hans"):
                    continue
                problems, report = check_cross_lingual(args.root, folder, domain, count)
                print(f"X->eng {report.line()}" + (f"; PROBLEMS: {problems}" if problems else ""))
                failed |= bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
