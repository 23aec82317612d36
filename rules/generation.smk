# LLM benchmark generation from a raw corpus (PosIR section 3, AIR-Bench section 2), and the PosIR import.
#
# One rule per stage; each writes its output with drops.tsv and counts.json under
# results/generation/{benchmark}/<stage>/.  The last rule writes the benchmark contract under
# results/benchmarks/{benchmark}/ (PATHS.benchmark_outputs, like every builder), so retrieval and evaluation
# run unchanged.  Which rule writes a benchmark is its builder's (posir.builders.BUILDERS), enforced by
# PLAN.benchmarks_built_by on the {benchmark} wildcard.
#
# The LLM endpoint comes from the running config's llm section, not params, so a local server on a new port
# reruns nothing; the answer-shaping settings (model, sampling) are in the job, so changing those does.
# Answers are cached (llm.cache_path).


rule read_raw_corpus:
    input:
        corpus=BENCHMARKS.raw_corpus,
    output:
        **PATHS.generation_stage_outputs("{benchmark}", "corpus"),
    log:
        PATHS.log("read_raw_corpus", "{benchmark}"),
    wildcard_constraints:
        benchmark=PLAN.benchmarks_built_by(GENERATION.name),
    priority: TEXTS_PRIORITY
    conda:
        "../envs/generation.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        job=job(BENCHMARKS.generation("corpus")),
    script:
        "../scripts/read_raw_corpus.py"


rule sample_documents:
    input:
        documents=PATHS.generation_file("{benchmark}", "corpus", "documents"),
    output:
        **PATHS.generation_stage_outputs("{benchmark}", "sample"),
    log:
        PATHS.log("sample_documents", "{benchmark}"),
    benchmark:
        PATHS.timing("sample_documents", "{benchmark}")
    wildcard_constraints:
        benchmark=PLAN.benchmarks_built_by(GENERATION.name),
    priority: TEXTS_PRIORITY
    conda:
        "../envs/generation.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        job=job(BENCHMARKS.generation("sample")),
    script:
        "../scripts/sample_documents.py"


rule generate_queries:
    input:
        documents=PATHS.generation_file("{benchmark}", "sample", "documents"),
        prompt=BENCHMARKS.prompt_files("generate_queries"),
    output:
        **PATHS.generation_stage_outputs("{benchmark}", "queries"),
    log:
        PATHS.log("generate_queries", "{benchmark}"),
    benchmark:
        PATHS.timing("generate_queries", "{benchmark}")
    wildcard_constraints:
        benchmark=PLAN.benchmarks_built_by(GENERATION.name),
    priority: TEXTS_PRIORITY
    conda:
        "../envs/generation.yaml"
    # The work happens on the LLM server; this job only waits on HTTP (llm.concurrency threads).
    threads: 1
    resources:
        mem_mb=1000,
        runtime=600,
        llm=1,
    params:
        job=job(BENCHMARKS.generation("queries")),
    script:
        "../scripts/generate_queries.py"


rule locate_spans:
    input:
        documents=PATHS.generation_file("{benchmark}", "sample", "documents"),
        candidates=PATHS.generation_file("{benchmark}", "queries", "candidates"),
        prompt=BENCHMARKS.prompt_files("locate_span"),
    output:
        **PATHS.generation_stage_outputs("{benchmark}", "spans"),
    log:
        PATHS.log("locate_spans", "{benchmark}"),
    benchmark:
        PATHS.timing("locate_spans", "{benchmark}")
    wildcard_constraints:
        benchmark=PLAN.benchmarks_built_by(GENERATION.name),
    priority: TEXTS_PRIORITY
    conda:
        "../envs/generation.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=600,
        llm=1,
    params:
        job=job(BENCHMARKS.generation("spans")),
    script:
        "../scripts/locate_spans.py"


rule span_contrast:
    input:
        documents=PATHS.generation_file("{benchmark}", "sample", "documents"),
        located=PATHS.generation_file("{benchmark}", "spans", "located"),
        prompt=BENCHMARKS.prompt_files("grade_relevance"),
    output:
        **PATHS.generation_stage_outputs("{benchmark}", "contrast"),
    log:
        PATHS.log("span_contrast", "{benchmark}"),
    benchmark:
        PATHS.timing("span_contrast", "{benchmark}")
    wildcard_constraints:
        benchmark=PLAN.benchmarks_built_by(GENERATION.name),
    priority: TEXTS_PRIORITY
    conda:
        "../envs/generation.yaml"
    threads: 2
    resources:
        mem_mb=BENCHMARKS.scorer_mem_mb,
        runtime=240,
        llm=1,
    params:
        job=job(BENCHMARKS.generation("contrast")),
    script:
        "../scripts/span_contrast.py"


rule grade_relevance:
    input:
        documents=PATHS.generation_file("{benchmark}", "sample", "documents"),
        kept=PATHS.generation_file("{benchmark}", "contrast", "kept"),
        prompt=BENCHMARKS.prompt_files("grade_relevance"),
    output:
        **PATHS.generation_stage_outputs("{benchmark}", "grading"),
    log:
        PATHS.log("grade_relevance", "{benchmark}"),
    benchmark:
        PATHS.timing("grade_relevance", "{benchmark}")
    wildcard_constraints:
        benchmark=PLAN.benchmarks_built_by(GENERATION.name),
    priority: TEXTS_PRIORITY
    conda:
        "../envs/generation.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=600,
        llm=1,
    params:
        job=job(BENCHMARKS.generation("grading")),
    script:
        "../scripts/grade_relevance.py"


rule remove_false_negatives:
    input:
        documents=PATHS.generation_file("{benchmark}", "sample", "documents"),
        kept=PATHS.generation_file("{benchmark}", "grading", "kept"),
        prompt=BENCHMARKS.prompt_files("grade_relevance"),
    output:
        **PATHS.generation_stage_outputs("{benchmark}", "false_negatives"),
    log:
        PATHS.log("remove_false_negatives", "{benchmark}"),
    benchmark:
        PATHS.timing("remove_false_negatives", "{benchmark}")
    wildcard_constraints:
        benchmark=PLAN.benchmarks_built_by(GENERATION.name),
    priority: TEXTS_PRIORITY
    conda:
        "../envs/generation.yaml"
    threads: 2
    resources:
        mem_mb=BENCHMARKS.scorer_mem_mb,
        runtime=240,
        llm=1,
    params:
        job=job(BENCHMARKS.generation("false_negatives")),
    script:
        "../scripts/remove_false_negatives.py"


rule assemble_generated_benchmark:
    input:
        documents=PATHS.generation_file("{benchmark}", "sample", "documents"),
        kept=PATHS.generation_file("{benchmark}", "false_negatives", "kept"),
        removed=PATHS.generation_file("{benchmark}", "false_negatives", "removed"),
        counts=BENCHMARKS.generation_counts,
        drops=BENCHMARKS.generation_drops,
    output:
        **PATHS.benchmark_outputs("{benchmark}"),
    log:
        PATHS.log("assemble_generated_benchmark", "{benchmark}"),
    wildcard_constraints:
        benchmark=PLAN.benchmarks_built_by(GENERATION.name),
    priority: TEXTS_PRIORITY
    conda:
        "../envs/generation.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        job=job(BENCHMARKS.generation("assemble")),
    script:
        "../scripts/assemble_generated_benchmark.py"


rule import_posir_benchmark:
    input:
        unpack(BENCHMARKS.import_files),
    output:
        **PATHS.benchmark_outputs("{benchmark}"),
    log:
        PATHS.log("import_posir_benchmark", "{benchmark}"),
    benchmark:
        PATHS.timing("import_posir_benchmark", "{benchmark}")
    wildcard_constraints:
        benchmark=PLAN.benchmarks_built_by(POSIR_IMPORT.name),
    priority: TEXTS_PRIORITY
    conda:
        "../envs/generation.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        job=job(BENCHMARKS.import_job),
    script:
        "../scripts/import_posir_benchmark.py"
