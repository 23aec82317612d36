"""The numbers the README and docs quote from the default run: read off its results, checked, written.

    posir doc-numbers                                   check the docs against docs/numbers.md
    posir doc-numbers --results results                 check both against a finished run's files
    posir doc-numbers --results results --write         rewrite docs/numbers.md and every quote from them

What the docs quote is declared once, in posir.tools.doc_quotes: each number with the file, row and column of
``results/`` it is read from and its format, each sentence that quotes it (a fragment of the document with the
number's key where the number stands), and the tables the docs show whole. docs/numbers.md is the generated file
the docs point to: every number with its value and source, every table. Checking finds each fragment in its
document and compares the numbers it holds; writing replaces them (and a table between its markers) in place, so
the prose around them stays as written. A fragment that no longer matches its document (the sentence was
reworded) is an error naming it: reword the fragment in posir.tools.doc_quotes too.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from posir.tools.doc_quotes import NUMBERS, QUOTES, TABLES
from posir.tools.quoting import (
    NUMBERS_FILE,
    check_spec,
    differences,
    numbers_file,
    quoted,
    read_numbers_file,
    read_run,
    run_identity,
    write_docs,
)

#: The checkout this package is installed from (editable): its README.md and docs/.
CHECKOUT = Path(__file__).resolve().parents[3]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, help="a finished default run's results/ folder")
    parser.add_argument("--write", action="store_true", help="rewrite docs/numbers.md and the quotes from --results")
    parser.add_argument("--commit", help="the run's commit (default: HEAD of the checkout holding --results)")
    parser.add_argument("--date", help="the run's date (default: the day its newest table was written)")
    parser.add_argument("--repo", type=Path, default=CHECKOUT, help="the checkout whose docs to check or write")
    args = parser.parse_args(argv)
    if args.write and args.results is None:
        parser.error("--write needs --results: the numbers come from a finished run")
    repo = args.repo.resolve()
    errors = check_spec(QUOTES, NUMBERS)
    _, unfound = quoted(repo, QUOTES, TABLES)
    if errors or unfound:  # nothing is written while a quote cannot be found
        print("\n".join(errors + unfound), file=sys.stderr)
        return 1
    recorded = read_numbers_file(repo / NUMBERS_FILE)
    if args.results is not None:
        identity = run_identity(args.results)
        identity.update({k: v for k, v in (("run.commit", args.commit), ("run.date", args.date)) if v})
        run, unread = read_run(args.results, NUMBERS, TABLES, identity)
        if unread:
            print("\n".join(["cannot read:", *unread]), file=sys.stderr)
            return 1
        if args.write:
            changed = write_docs(repo, run, QUOTES, TABLES)
            (repo / NUMBERS_FILE).write_text(numbers_file(run, TABLES, QUOTES), encoding="utf-8")
            print(f"wrote {NUMBERS_FILE}; rewrote the numbers of {', '.join(changed) or 'no document'}")
            recorded = read_numbers_file(repo / NUMBERS_FILE)
        else:  # a check compares what the run's files hold, not which checkout or day it ran on
            run.numbers = {k: v for k, v in run.numbers.items() if k not in identity}
        errors += differences(run, recorded, NUMBERS_FILE)
    docs, _ = quoted(repo, QUOTES, TABLES)
    errors += differences(recorded, docs, "the docs")
    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 1
    print(f"{len(recorded.numbers)} numbers and {len(recorded.tables)} tables: the docs quote {NUMBERS_FILE}")
    return 0
