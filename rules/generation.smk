# LLM benchmark generation from a raw corpus (PosIR section 3, AIR-Bench section 2), and the PosIR import.
#
# One rule per stage; each writes its output with drops.tsv and counts.json under
# results/generation/{benchmark}/<stage>/.  The last rule writes the benchmark contract under
# results/benchmarks/{benchmark}/, the same files the squad builder writes, so retrieval and
# evaluation run unchanged.  Which rule may write a benchmark is decided by its builder
# (benchmarks_built_by in common.smk): build_benchmark for squad_long_documents,
# assemble_generated_benchmark for llm_generation, import_posir_benchmark for posir_import.
#
# The LLM endpoint comes from the config's llm section.  Rules read it from the config (not
# params), so a local server on a new port does not rerun them; the answer-shaping settings
# (model, sampling) are params, so changing those does.  Answers are cached (llm.cache_path).

rule read_raw_corpus:
    input:
        corpus=generation_corpus_input,
    output:
        documents=f"{GEN}/corpus/documents.jsonl",
        drops=f"{GEN}/corpus/drops.tsv",
        counts=f"{GEN}/corpus/counts.json",
    params:
        entry=benchmark_entry,
    wildcard_constraints:
        benchmark=GENERATION_BENCHMARKS,
    log:
        f"{RESULTS}/logs/read_raw_corpus/{{benchmark}}.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    conda:
        "../envs/generation.yaml"
    script:
        "../scripts/read_raw_corpus.py"


rule sample_documents:
    input:
        documents=f"{GEN}/corpus/documents.jsonl",
    output:
        documents=f"{GEN}/sample/documents.jsonl",
        drops=f"{GEN}/sample/drops.tsv",
        counts=f"{GEN}/sample/counts.json",
    params:
        entry=benchmark_entry,
    wildcard_constraints:
        benchmark=GENERATION_BENCHMARKS,
    log:
        f"{RESULTS}/logs/sample_documents/{{benchmark}}.log",
    benchmark:
        f"{RESULTS}/timing/sample_documents/{{benchmark}}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    conda:
        "../envs/generation.yaml"
    script:
        "../scripts/sample_documents.py"


rule generate_queries:
    input:
        documents=f"{GEN}/sample/documents.jsonl",
        prompt=prompt_files("generate_queries"),
    output:
        candidates=f"{GEN}/queries/candidates.jsonl",
        drops=f"{GEN}/queries/drops.tsv",
        counts=f"{GEN}/queries/counts.json",
    params:
        entry=benchmark_entry,
        llm=llm_answer_settings,
        prompts=prompts_dir_of,
    wildcard_constraints:
        benchmark=GENERATION_BENCHMARKS,
    log:
        f"{RESULTS}/logs/generate_queries/{{benchmark}}.log",
    benchmark:
        f"{RESULTS}/timing/generate_queries/{{benchmark}}.tsv"
    # The work happens on the LLM server; this job only waits on HTTP (llm.concurrency threads).
    threads: 1
    resources:
        mem_mb=1000,
        runtime=600,
        llm=1,
    conda:
        "../envs/generation.yaml"
    script:
        "../scripts/generate_queries.py"


rule locate_spans:
    input:
        documents=f"{GEN}/sample/documents.jsonl",
        candidates=f"{GEN}/queries/candidates.jsonl",
        prompt=prompt_files("locate_span"),
    output:
        located=f"{GEN}/spans/located.jsonl",
        drops=f"{GEN}/spans/drops.tsv",
        counts=f"{GEN}/spans/counts.json",
    params:
        entry=benchmark_entry,
        llm=llm_answer_settings,
        prompts=prompts_dir_of,
    wildcard_constraints:
        benchmark=GENERATION_BENCHMARKS,
    log:
        f"{RESULTS}/logs/locate_spans/{{benchmark}}.log",
    benchmark:
        f"{RESULTS}/timing/locate_spans/{{benchmark}}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=600,
        llm=1,
    conda:
        "../envs/generation.yaml"
    script:
        "../scripts/locate_spans.py"


rule span_contrast:
    input:
        documents=f"{GEN}/sample/documents.jsonl",
        located=f"{GEN}/spans/located.jsonl",
        prompt=prompt_files("grade_relevance"),
    output:
        kept=f"{GEN}/contrast/kept.jsonl",
        scores=f"{GEN}/contrast/scores.tsv",
        drops=f"{GEN}/contrast/drops.tsv",
        counts=f"{GEN}/contrast/counts.json",
    params:
        entry=benchmark_entry,
        scorers=config.get("scorers", {}),
        llm=llm_answer_settings,
        prompts=prompts_dir_of,
    wildcard_constraints:
        benchmark=GENERATION_BENCHMARKS,
    log:
        f"{RESULTS}/logs/span_contrast/{{benchmark}}.log",
    benchmark:
        f"{RESULTS}/timing/span_contrast/{{benchmark}}.tsv"
    threads: 2
    resources:
        mem_mb=scorer_mem_mb,
        runtime=240,
        llm=1,
    conda:
        "../envs/generation.yaml"
    script:
        "../scripts/span_contrast.py"


rule grade_relevance:
    input:
        documents=f"{GEN}/sample/documents.jsonl",
        kept=f"{GEN}/contrast/kept.jsonl",
        prompt=prompt_files("grade_relevance"),
    output:
        kept=f"{GEN}/grading/kept.jsonl",
        grades=f"{GEN}/grading/grades.tsv",
        drops=f"{GEN}/grading/drops.tsv",
        counts=f"{GEN}/grading/counts.json",
    params:
        entry=benchmark_entry,
        llm=llm_answer_settings,
        prompts=prompts_dir_of,
    wildcard_constraints:
        benchmark=GENERATION_BENCHMARKS,
    log:
        f"{RESULTS}/logs/grade_relevance/{{benchmark}}.log",
    benchmark:
        f"{RESULTS}/timing/grade_relevance/{{benchmark}}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=600,
        llm=1,
    conda:
        "../envs/generation.yaml"
    script:
        "../scripts/grade_relevance.py"


rule remove_false_negatives:
    input:
        documents=f"{GEN}/sample/documents.jsonl",
        kept=f"{GEN}/grading/kept.jsonl",
        prompt=prompt_files("grade_relevance"),
    output:
        kept=f"{GEN}/false_negatives/kept.jsonl",
        removed=f"{GEN}/false_negatives/removed_documents.tsv",
        drops=f"{GEN}/false_negatives/drops.tsv",
        counts=f"{GEN}/false_negatives/counts.json",
    params:
        entry=benchmark_entry,
        models=config.get("models", {}),
        scorers=config.get("scorers", {}),
        llm=llm_answer_settings,
        prompts=prompts_dir_of,
    wildcard_constraints:
        benchmark=GENERATION_BENCHMARKS,
    log:
        f"{RESULTS}/logs/remove_false_negatives/{{benchmark}}.log",
    benchmark:
        f"{RESULTS}/timing/remove_false_negatives/{{benchmark}}.tsv"
    threads: 2
    resources:
        mem_mb=scorer_mem_mb,
        runtime=240,
        llm=1,
    conda:
        "../envs/generation.yaml"
    script:
        "../scripts/remove_false_negatives.py"


rule assemble_generated_benchmark:
    input:
        documents=f"{GEN}/sample/documents.jsonl",
        kept=f"{GEN}/false_negatives/kept.jsonl",
        removed=f"{GEN}/false_negatives/removed_documents.tsv",
        counts=generation_counts,
        drops=generation_drops,
    output:
        corpus=f"{RESULTS}/benchmarks/{{benchmark}}/corpus.jsonl",
        queries=f"{RESULTS}/benchmarks/{{benchmark}}/queries.jsonl",
        qrels=f"{RESULTS}/benchmarks/{{benchmark}}/qrels/test.tsv",
        positions=f"{RESULTS}/benchmarks/{{benchmark}}/positions.tsv",
        drops=f"{RESULTS}/benchmarks/{{benchmark}}/drops.tsv",
        card=f"{RESULTS}/benchmarks/{{benchmark}}/card.json",
    params:
        entry=benchmark_entry,
        metrics=METRICS_CONFIG,
        stage_dirs=generation_stage_dirs,
        llm=llm_answer_settings,
    wildcard_constraints:
        benchmark=GENERATION_BENCHMARKS,
    log:
        f"{RESULTS}/logs/assemble_generated_benchmark/{{benchmark}}.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    conda:
        "../envs/generation.yaml"
    script:
        "../scripts/assemble_generated_benchmark.py"


rule import_posir_benchmark:
    input:
        unpack(posir_import_files),
    output:
        corpus=f"{RESULTS}/benchmarks/{{benchmark}}/corpus.jsonl",
        queries=f"{RESULTS}/benchmarks/{{benchmark}}/queries.jsonl",
        qrels=f"{RESULTS}/benchmarks/{{benchmark}}/qrels/test.tsv",
        positions=f"{RESULTS}/benchmarks/{{benchmark}}/positions.tsv",
        drops=f"{RESULTS}/benchmarks/{{benchmark}}/drops.tsv",
        card=f"{RESULTS}/benchmarks/{{benchmark}}/card.json",
    params:
        entry=benchmark_entry,
        metrics=METRICS_CONFIG,
    wildcard_constraints:
        benchmark=names_with_builder("posir_import"),
    log:
        f"{RESULTS}/logs/import_posir_benchmark/{{benchmark}}.log",
    benchmark:
        f"{RESULTS}/timing/import_posir_benchmark/{{benchmark}}.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        "../envs/generation.yaml"
    script:
        "../scripts/import_posir_benchmark.py"
