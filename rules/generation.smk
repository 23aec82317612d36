# LLM benchmark generation from a raw corpus (PosIR section 3, AIR-Bench section 2), and the PosIR import.
#
# One rule per stage; each writes its output with drops.tsv and counts.json under
# results/generation/{benchmark}/<stage>/.  The last rule writes the benchmark contract under
# results/benchmarks/{benchmark}/ (benchmark_outputs, like every builder), so retrieval and evaluation
# run unchanged.  Which rule writes a benchmark is its builder's (posir.builders.BUILDERS), enforced by
# names_with_builder on the {benchmark} wildcard.
#
# The LLM endpoint comes from the config's llm section.  Rules read it from the config (not
# params), so a local server on a new port does not rerun them; the answer-shaping settings
# (model, sampling) are params, so changing those does.  Answers are cached (llm.cache_path).


rule read_raw_corpus:
    input:
        corpus=config_value("benchmarks/{benchmark}/generation/corpus/path"),
    output:
        **stage_outputs("corpus", documents="documents.jsonl"),
    log:
        f"{RESULTS}/logs/read_raw_corpus/{{benchmark}}.log",
    wildcard_constraints:
        benchmark=names_with_builder(GENERATION),
    conda:
        "../envs/generation.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        entry=config_value("benchmarks/{benchmark}"),
    script:
        "../scripts/read_raw_corpus.py"


rule sample_documents:
    input:
        documents=f"{RESULTS}/generation/{{benchmark}}/corpus/documents.jsonl",
    output:
        **stage_outputs("sample", documents="documents.jsonl"),
    log:
        f"{RESULTS}/logs/sample_documents/{{benchmark}}.log",
    benchmark:
        f"{RESULTS}/timing/sample_documents/{{benchmark}}.tsv"
    wildcard_constraints:
        benchmark=names_with_builder(GENERATION),
    conda:
        "../envs/generation.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        entry=config_value("benchmarks/{benchmark}"),
    script:
        "../scripts/sample_documents.py"


rule generate_queries:
    input:
        documents=f"{RESULTS}/generation/{{benchmark}}/sample/documents.jsonl",
        prompt=prompt_files("generate_queries"),
    output:
        **stage_outputs("queries", candidates="candidates.jsonl"),
    log:
        f"{RESULTS}/logs/generate_queries/{{benchmark}}.log",
    benchmark:
        f"{RESULTS}/timing/generate_queries/{{benchmark}}.tsv"
    wildcard_constraints:
        benchmark=names_with_builder(GENERATION),
    conda:
        "../envs/generation.yaml"
    # The work happens on the LLM server; this job only waits on HTTP (llm.concurrency threads).
    threads: 1
    resources:
        mem_mb=1000,
        runtime=600,
        llm=1,
    params:
        entry=config_value("benchmarks/{benchmark}"),
        llm=llm_answer_settings,
        prompts=prompts_dir_of,
    script:
        "../scripts/generate_queries.py"


rule locate_spans:
    input:
        documents=f"{RESULTS}/generation/{{benchmark}}/sample/documents.jsonl",
        candidates=f"{RESULTS}/generation/{{benchmark}}/queries/candidates.jsonl",
        prompt=prompt_files("locate_span"),
    output:
        **stage_outputs("spans", located="located.jsonl"),
    log:
        f"{RESULTS}/logs/locate_spans/{{benchmark}}.log",
    benchmark:
        f"{RESULTS}/timing/locate_spans/{{benchmark}}.tsv"
    wildcard_constraints:
        benchmark=names_with_builder(GENERATION),
    conda:
        "../envs/generation.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=600,
        llm=1,
    params:
        entry=config_value("benchmarks/{benchmark}"),
        llm=llm_answer_settings,
        prompts=prompts_dir_of,
    script:
        "../scripts/locate_spans.py"


rule span_contrast:
    input:
        documents=f"{RESULTS}/generation/{{benchmark}}/sample/documents.jsonl",
        located=f"{RESULTS}/generation/{{benchmark}}/spans/located.jsonl",
        prompt=prompt_files("grade_relevance"),
    output:
        **stage_outputs("contrast", kept="kept.jsonl", scores="scores.tsv"),
    log:
        f"{RESULTS}/logs/span_contrast/{{benchmark}}.log",
    benchmark:
        f"{RESULTS}/timing/span_contrast/{{benchmark}}.tsv"
    wildcard_constraints:
        benchmark=names_with_builder(GENERATION),
    conda:
        "../envs/generation.yaml"
    threads: 2
    resources:
        mem_mb=scorer_mem_mb,
        runtime=240,
        llm=1,
    params:
        entry=config_value("benchmarks/{benchmark}"),
        scorers=stage_scorers("contrast"),
        models=stage_models("contrast"),
        score_cache=SCORE_CACHE,
        embedding_cache=EMBEDDING_CACHE,
        llm=llm_answer_settings,
        prompts=prompts_dir_of,
    script:
        "../scripts/span_contrast.py"


rule grade_relevance:
    input:
        documents=f"{RESULTS}/generation/{{benchmark}}/sample/documents.jsonl",
        kept=f"{RESULTS}/generation/{{benchmark}}/contrast/kept.jsonl",
        prompt=prompt_files("grade_relevance"),
    output:
        **stage_outputs("grading", kept="kept.jsonl", grades="grades.tsv"),
    log:
        f"{RESULTS}/logs/grade_relevance/{{benchmark}}.log",
    benchmark:
        f"{RESULTS}/timing/grade_relevance/{{benchmark}}.tsv"
    wildcard_constraints:
        benchmark=names_with_builder(GENERATION),
    conda:
        "../envs/generation.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=600,
        llm=1,
    params:
        entry=config_value("benchmarks/{benchmark}"),
        llm=llm_answer_settings,
        prompts=prompts_dir_of,
    script:
        "../scripts/grade_relevance.py"


rule remove_false_negatives:
    input:
        documents=f"{RESULTS}/generation/{{benchmark}}/sample/documents.jsonl",
        kept=f"{RESULTS}/generation/{{benchmark}}/grading/kept.jsonl",
        prompt=prompt_files("grade_relevance"),
    output:
        **stage_outputs("false_negatives", kept="kept.jsonl", removed="removed_documents.tsv"),
    log:
        f"{RESULTS}/logs/remove_false_negatives/{{benchmark}}.log",
    benchmark:
        f"{RESULTS}/timing/remove_false_negatives/{{benchmark}}.tsv"
    wildcard_constraints:
        benchmark=names_with_builder(GENERATION),
    conda:
        "../envs/generation.yaml"
    threads: 2
    resources:
        mem_mb=scorer_mem_mb,
        runtime=240,
        llm=1,
    params:
        entry=config_value("benchmarks/{benchmark}"),
        models=stage_models("false_negatives"),
        scorers=stage_scorers("false_negatives"),
        score_cache=SCORE_CACHE,
        embedding_cache=EMBEDDING_CACHE,
        llm=llm_answer_settings,
        prompts=prompts_dir_of,
    script:
        "../scripts/remove_false_negatives.py"


rule assemble_generated_benchmark:
    input:
        documents=f"{RESULTS}/generation/{{benchmark}}/sample/documents.jsonl",
        kept=f"{RESULTS}/generation/{{benchmark}}/false_negatives/kept.jsonl",
        removed=f"{RESULTS}/generation/{{benchmark}}/false_negatives/removed_documents.tsv",
        counts=generation_counts,
        drops=generation_drops,
    output:
        **benchmark_outputs("{benchmark}"),
    log:
        f"{RESULTS}/logs/assemble_generated_benchmark/{{benchmark}}.log",
    wildcard_constraints:
        benchmark=names_with_builder(GENERATION),
    conda:
        "../envs/generation.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        entry=config_value("benchmarks/{benchmark}"),
        metrics=POSITION_CONFIG,
        stage_dirs=generation_stage_dirs,
        llm=llm_answer_settings,
    script:
        "../scripts/assemble_generated_benchmark.py"


rule import_posir_benchmark:
    input:
        unpack(posir_import_files),
    output:
        **benchmark_outputs("{benchmark}"),
    log:
        f"{RESULTS}/logs/import_posir_benchmark/{{benchmark}}.log",
    benchmark:
        f"{RESULTS}/timing/import_posir_benchmark/{{benchmark}}.tsv"
    wildcard_constraints:
        benchmark=names_with_builder(POSIR_IMPORT),
    conda:
        "../envs/generation.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        entry=config_value("benchmarks/{benchmark}"),
        metrics=POSITION_CONFIG,
    script:
        "../scripts/import_posir_benchmark.py"
