"""The workflow's tools beside ``snakemake``, one module each, run as subcommands of ``posir`` (:mod:`posir.cli`).

A tool reads what a run wrote (through :mod:`posir.results`) or asks Snakemake about a run; no rule or step imports
a tool.
"""
