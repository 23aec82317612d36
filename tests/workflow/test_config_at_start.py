"""What Snakemake itself does with a config when it starts: a mistake is one sentence, not the schema; a block
that asks for more rules plans them. (The sentences themselves are tested without Snakemake in
tests/faults/test_config_checks.py and tests/reference/test_translation_config.py.)"""

from __future__ import annotations

import yaml

from posir.config import load_config
from tests._snakemake import Build, merged_config


def test_snakemake_prints_the_sentence_not_the_schema(tmp_path, mirror):
    config = merged_config()
    config["benchmarks"]["a/b"] = config["benchmarks"]["squad-long"]
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    done = Build(tmp_path, mirror, ()).snakemake("-n", timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert "config: benchmarks.a/b: 'a/b' does not match" in output
    assert "additionalProperties" not in output and len(output.splitlines()) < 10, output


def test_judge_and_comparison_rules_are_planned(tmp_path, mirror) -> None:
    """A judge block (with an llm section) adds the judge rules; the comparison table needs both translations."""
    build = Build.prepare(tmp_path, mirror, ["translation_judge"])
    load_config(build.config())  # the config the dry run reads is valid
    jobs = build.planned(
        "results/tables/xquad-parallel-apertium/translation_judge.md",
        "results/tables/xquad-spa/translation_comparison.md",
    )
    assert ("judge_translation", {"benchmark": "xquad-parallel-apertium", "language": "spa"}) in jobs
    rules = {rule for rule, _ in jobs}
    assert {
        "translation_judge_table",
        "translation_comparison",
        "translate_benchmark",
        "build_parallel_variant",
    } <= rules
    translated = {w["benchmark"] for rule, w in jobs if rule == "translate_benchmark"}
    # squad-long's apertium translation goes first: the variants of one language pair translate in a fixed order
    # (posir.plan.benchmarks.BenchmarkPlan.apertium_translated_before), so the shared articles' Spanish is the same
    # whatever the schedule
    assert translated == {"squad-long-apertium", "xquad-parallel-apertium", "xquad-parallel-human"}
