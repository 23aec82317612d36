# Paths and input functions of the LLM generation rules (rules/generation.smk) and the PosIR import.
from pathlib import Path

PROMPTS = Path(workflow.basedir) / "prompts"
GEN = f"{RESULTS}/generation/{{benchmark}}"
GENERATION_BENCHMARKS = names_with_builder("llm_generation")


def generation_corpus_input(wildcards):
    return config["benchmarks"][wildcards.benchmark]["generation"]["corpus"]["path"]


def prompt_files(name):
    return [str(PROMPTS / f"{name}.md"), str(PROMPTS / f"{name}.schema.json")]


def llm_answer_settings(wildcards):
    """The llm settings that shape answers; a change reruns the LLM stages (the cache keeps old answers)."""
    section = config.get("llm", {}) or {}
    return {k: section.get(k) for k in ("model", "temperature", "max_tokens", "seed")}


def prompts_dir_of(wildcards, input):
    """The folder of the rule's prompt files (inputs, so editing a prompt reruns its stage)."""
    return str(Path(input.prompt[0]).parent)


def scorer_mem_mb(wildcards):
    block = config["benchmarks"][wildcards.benchmark]["generation"]
    names = set(block.get("contrast", {}).get("scorers", [])) | set(block.get("false_negatives", {}).get("scorers", []))
    return max([config.get("scorers", {})[n].get("mem_mb", 3000) for n in names] + [3000])


def generation_stage_dirs(wildcards):
    stages = ["corpus", "sample", "queries", "spans", "contrast", "grading", "false_negatives"]
    return [f"{RESULTS}/generation/{wildcards.benchmark}/{s}" for s in stages]


def generation_counts(wildcards):
    return [f"{d}/counts.json" for d in generation_stage_dirs(wildcards)]


def generation_drops(wildcards):
    return [f"{d}/drops.tsv" for d in generation_stage_dirs(wildcards)]


def posir_import_files(wildcards):
    from posir.builders.posir_import import ImportSpec

    spec = ImportSpec.from_config(config["benchmarks"][wildcards.benchmark]["posir_import"])
    return {} if spec.download else {k: str(v) for k, v in spec.files().items()}
