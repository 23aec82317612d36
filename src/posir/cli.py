"""The ``posir`` command: the workflow's tools beside ``snakemake``, one subcommand each.

    posir <subcommand> [its arguments]          (or: python -m posir.cli <subcommand> ...)

A subcommand is a function ``main(argv) -> int | None`` of a module under :mod:`posir.tools`, named in
:data:`COMMANDS` and imported only when it runs: ``posir --help`` reads each tool's one-line summary from its
source, so it starts without pandas, torch or Snakemake. A new tool is one line in :data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path

#: subcommand -> "module:function"
COMMANDS: dict[str, str] = {
    "compare-models": "posir.tools.compare_models:main",
    "doc-numbers": "posir.tools.doc_numbers:main",
    "gpu-encode": "posir.tools.gpu_encode:main",
    "slurm-jobs": "posir.tools.slurm_jobs:main",
}


def summary(target: str) -> str:
    """The first line of the module's docstring, read from its source (the module is not imported)."""
    module = target.partition(":")[0]
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return f"(no module {module})"
    docstring = ast.get_docstring(ast.parse(Path(spec.origin).read_text(encoding="utf-8"))) or ""
    return docstring.partition("\n")[0]


def parser() -> argparse.ArgumentParser:
    listing = "\n".join(f"  {name:<18}{summary(target)}" for name, target in COMMANDS.items())
    cli = argparse.ArgumentParser(
        prog="posir",
        description="The workflow's tools beside snakemake, one subcommand each.",
        epilog=f"subcommands:\n{listing}\n\n`posir <subcommand> --help` says what each takes.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cli.add_argument("subcommand", choices=list(COMMANDS), metavar="subcommand", help="one of those listed below")
    cli.add_argument("arguments", nargs=argparse.REMAINDER, help="the subcommand's own")
    return cli


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    cli = parser()
    if not argv:
        cli.error("give a subcommand (posir --help lists them)")
    args = cli.parse_args(argv)
    module, _, function = COMMANDS[args.subcommand].partition(":")
    run = getattr(importlib.import_module(module), function)
    program, sys.argv = sys.argv, [f"posir {args.subcommand}", *args.arguments]  # a tool's argparse names it argv[0]
    try:
        return run(args.arguments) or 0
    finally:
        sys.argv = program


if __name__ == "__main__":
    sys.exit(main())
