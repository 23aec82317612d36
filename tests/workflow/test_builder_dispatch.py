"""One rule per builder writes results/benchmarks/{benchmark}/: planned by dry run, never ambiguous; every
builder writes the whole contract, so any benchmark with its own corpus can be translated."""

from __future__ import annotations

from tests._snakemake import Build


def dispatch_build(tmp_path, mirror, *more: str) -> Build:
    """tests/configs/dispatch.yaml (and ``more`` test configs): config.yaml plus an LLM-generated benchmark ('gen')
    and a PosIR import ('imported')."""
    (tmp_path / "raw.jsonl").write_text('{"id": "a", "text": "x"}\n')
    return Build.prepare(tmp_path, mirror, ["dispatch", *more])


def test_each_benchmark_is_built_by_its_builders_rule(tmp_path, mirror):
    evaluation = [{"benchmark": b, "models": ["bm25"]} for b in ("squad-long", "gen", "imported")]
    dry = dispatch_build(tmp_path, mirror).snakemake("-n", "--cores", "1", more={"evaluation": evaluation}, timeout=600)
    out = dry.stdout + dry.stderr
    assert dry.returncode == 0, out[-3000:]
    planned = {}
    for block in out.split("\nrule ")[1:]:
        rule = block.split(":", 1)[0]
        for line in block.splitlines():
            if line.strip().startswith("wildcards:") and "benchmark=" in line:
                planned.setdefault(line.split("benchmark=")[1].split(",")[0], set()).add(rule)
    assert {"build_benchmark", "encode_texts"} & planned["squad-long"] == {"build_benchmark"}
    assert "assemble_generated_benchmark" in planned["gen"] and "build_benchmark" not in planned["gen"]
    assert {
        "read_raw_corpus",
        "generate_queries",
        "locate_spans",
        "span_contrast",
        "grade_relevance",
        "remove_false_negatives",
    } <= planned["gen"]
    assert "import_posir_benchmark" in planned["imported"] and "build_benchmark" not in planned["imported"]


def test_generated_and_imported_benchmarks_can_be_translated(tmp_path, mirror):
    """Before, a translation 'from' a generated or imported benchmark passed the config check and failed at DAG
    time: those builders wrote no documents.tsv. Every builder now writes the whole contract."""
    translations = {
        f"{source}-es": {
            "builder": "translation",
            "from": source,
            "translations": {"spa": {"backend": "apertium", "pair": "eng-spa"}},
        }
        for source in ("gen", "imported")
    }
    evaluation = [{"benchmark": f"{b}-es", "models": ["bm25"], "settings": ["spa-spa"]} for b in ("gen", "imported")]
    jobs = dispatch_build(tmp_path, mirror, "reports_off").planned(
        more={"benchmarks": translations, "evaluation": evaluation}
    )
    translated = {w["benchmark"] for rule, w in jobs if rule == "translate_benchmark"}
    assert translated == {"gen-es", "imported-es"}
    assert ("assemble_generated_benchmark", {"benchmark": "gen"}) in jobs
    assert ("import_posir_benchmark", {"benchmark": "imported"}) in jobs


def test_a_translation_of_a_query_only_benchmark_is_refused_at_start(tmp_path, mirror):
    query_only = {
        "builder": "translation",
        "from": "xquad-long",
        "translations": {"spa": {"backend": "apertium", "pair": "eng-spa"}},
    }
    dry = Build.prepare(tmp_path, mirror).snakemake("-n", "--cores", "1", more={"benchmarks": {"xl-es": query_only}})
    assert dry.returncode != 0
    assert "benchmarks.xl-es.from: 'xquad-long' (xquad_cross_lingual) holds queries only" in dry.stdout + dry.stderr
