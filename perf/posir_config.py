"""Write a config that evaluates PosIR's 310 datasets in PosIR's 18 settings, with today's config shapes.

PosIR (infgrad/PosIR-Benchmark-v1, or the synthetic copy of ``perf/make_posir_collection.py``) is one folder
per language and domain. A ``posir_import`` benchmark is one such folder in one language, so:

- each of the 310 folders is a benchmark ``posir.<domain>.<lang>`` evaluated in ``<lang>-<lang>`` (PosIR's 10
  monolingual settings; Chinese is ``cmn``, as in PosIR's folders and published results);
- each X->eng setting (ara, deu, fra, ita, kor, por, rus, spa; PosIR has no cmn-eng: its Chinese corpus is not
  parallel to English) is a benchmark ``posir.<domain>.<lang>-eng``: the same X folder imported again with
  ``corpus_from: posir.<domain>.eng``. Its queries, qrels and positions are X's query file's, which is what
  PosIR's analysis uses (``ndcg_PSI_analysis.py`` reads the query language's file); ids are shared with English.

That is 310 + 248 = 558 benchmarks and as many evaluation blocks. The cost of the shapes (a second import of
each translated folder; no pooling of the 31 domains of a setting) is discussed in docs/posir-scale.md.

Usage (``--configfile`` merges it over config.yaml; ``--standalone`` writes the merged config instead)::

    python perf/posir_config.py --root /tmp/posir-synth05 --out /tmp/posir.yaml
    snakemake -n --configfile /tmp/posir.yaml
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from perf.make_posir_collection import FOLDERS, TRANSLATED

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SIZES = HERE / "posir_sizes.tsv"

#: PosIR's 8 cross-lingual X->eng settings (Table 3) are its translated languages (section 3.4).
CROSS_LINGUAL: tuple[str, ...] = TRANSLATED
#: The default dense models and BM25 of config.yaml's evaluation blocks.
DEFAULT_MODELS: tuple[str, ...] = ("minilm-l6", "minilm-l6-r2", "me5-small", "use-m3", "bm25")
CHUNK_MODELS: tuple[str, ...] = ("minilm-l6-chunks", "me5-small-chunks")
#: Report blocks of config.yaml that name its own benchmarks: cleared (null) in a merged config.
CLEARED = ("paper_tables", "translation_comparisons")


def posir_domains(sizes: Path = SIZES) -> list[str]:
    """PosIR's 31 domain folders, in the order of Tables 13-43 (perf/posir_sizes.tsv)."""
    rows = sizes.read_text(encoding="utf-8").splitlines()
    column = rows[0].split("\t").index("domain")
    return list(dict.fromkeys(row.split("\t")[column] for row in rows[1:] if row))


def benchmark_name(domain: str, language: str, cross_lingual: bool = False) -> str:
    return f"posir.{domain}.{language}" + ("-eng" if cross_lingual else "")


def posir_benchmarks(
    root: str, domains: Sequence[str], languages: Sequence[str], cross_lingual: Iterable[str]
) -> dict[str, dict[str, Any]]:
    """The benchmark entries: one per folder, and one per X->eng pairing (corpus from the English folder)."""
    entries: dict[str, dict[str, Any]] = {}
    crossed = [lang for lang in cross_lingual if lang in languages]
    if crossed and "eng" not in languages:
        raise ValueError("X->eng settings need the English folders: add eng to --languages")
    for domain in domains:
        for lang in languages:
            entries[benchmark_name(domain, lang)] = {
                "builder": "posir_import",
                "language": lang,
                "posir_import": {"path": root, "subset": f"{FOLDERS[lang]}/{domain}"},
            }
        for lang in crossed:
            entries[benchmark_name(domain, lang, cross_lingual=True)] = {
                "builder": "posir_import",
                "language": lang,
                "corpus_from": benchmark_name(domain, "eng"),
                "posir_import": {"path": root, "subset": f"{FOLDERS[lang]}/{domain}"},
            }
    return entries


def posir_evaluation(benchmarks: Mapping[str, Mapping[str, Any]], models: Sequence[str]) -> list[dict[str, Any]]:
    """One block per benchmark: its language's monolingual setting, or X-eng for an X->eng entry."""
    blocks = []
    for name, entry in benchmarks.items():
        corpus = "eng" if entry.get("corpus_from") else entry["language"]
        blocks.append({"benchmark": name, "models": list(models), "settings": [f"{entry['language']}-{corpus}"]})
    return blocks


def posir_config(
    root: str,
    domains: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    cross_lingual: Iterable[str] = CROSS_LINGUAL,
    models: Sequence[str] = DEFAULT_MODELS,
    exact_metrics: bool = False,
) -> dict[str, Any]:
    """The overlay merged over config.yaml by ``--configfile`` (mappings merge, lists and null replace)."""
    benchmarks = posir_benchmarks(root, list(domains or posir_domains()), list(languages or FOLDERS), cross_lingual)
    config: dict[str, Any] = {"benchmarks": benchmarks, "evaluation": posir_evaluation(benchmarks, models)}
    config.update({block: None for block in CLEARED})
    # the analyses name config.yaml's squad-long, which this overlay does not evaluate
    config["analyses"] = {"saliency": {"runs": None}, "representation": {"runs": None}}
    if exact_metrics:
        # PosIR's analysis: every non-empty bin counts (ndcg_PSI_analysis.py has no minimum); Q4 open (the default)
        config["metrics"] = {"min_bin_queries": 1}
    return config


def merged(base: Mapping[str, Any], overlay: Mapping[str, Any]) -> dict[str, Any]:
    """``overlay`` over ``base`` as Snakemake's ``--configfile`` merges it (snakemake.utils.update_config)."""
    out = dict(base)
    for key, value in overlay.items():
        out[key] = (
            merged(out[key], value) if isinstance(value, Mapping) and isinstance(out.get(key), Mapping) else value
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True, help="the folder holding <lang>-<Script>/<domain>/ (PosIR layout)")
    parser.add_argument("--out", type=Path, required=True, help="the YAML file written")
    parser.add_argument("--domains", nargs="+", help="a subset of the 31 domains (default: all)")
    parser.add_argument("--languages", nargs="+", choices=list(FOLDERS), help="default: all 10")
    parser.add_argument("--no-cross-lingual", action="store_true", help="only the 10 monolingual settings")
    parser.add_argument("--models", nargs="+", default=list(DEFAULT_MODELS))
    parser.add_argument("--chunks", action="store_true", help=f"also {', '.join(CHUNK_MODELS)}")
    parser.add_argument("--exact-metrics", action="store_true", help="min_bin_queries: 1, as PosIR's analysis")
    parser.add_argument(
        "--standalone",
        action="store_true",
        help="write config.yaml with the overlay merged in (a complete config), not the overlay",
    )
    args = parser.parse_args(argv)
    root = Path(args.root)
    if not root.is_dir():
        print(f"warning: {root} is not a folder (the imports will fail until it exists)", file=sys.stderr)
    models = [*args.models, *(CHUNK_MODELS if args.chunks else ())]
    config = posir_config(
        str(root.resolve()),
        args.domains,
        args.languages,
        () if args.no_cross_lingual else CROSS_LINGUAL,
        models,
        args.exact_metrics,
    )
    if args.standalone:
        config = merged(yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8")), config)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(yaml.safe_dump(config, sort_keys=False, width=120, allow_unicode=True), encoding="utf-8")
    n_settings = len(config["evaluation"])
    print(
        f"{args.out}: {len(config['benchmarks'])} benchmarks, {n_settings} evaluation blocks x {len(models)} "
        f"models = {n_settings * len(models)} evaluations",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
