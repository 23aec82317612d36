# Encoding every text set once per model (through the embedding cache), search and the scoring of its run (one job:
# both are short, and every job costs a Python start-up), and renormalization means.


rule convert_model:
    output:
        directory(PATHS.converted_model("{package}")),
    log:
        PATHS.log("convert_model", "{package}"),
    benchmark:
        PATHS.timing("convert_model", "{package}")
    wildcard_constraints:
        package=RETRIEVAL.converted_packages_regex(),
    conda:
        "../envs/retrieval.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    script:
        "../scripts/convert_model.py"


rule export_model:
    input:
        unpack(RETRIEVAL.export_inputs),
    output:
        **PATHS.exported_model("{model}"),
    log:
        PATHS.log("export_model", "{model}"),
    benchmark:
        PATHS.timing("export_model", "{model}")
    conda:
        "../envs/retrieval.yaml"
    threads: 1
    resources:
        mem_mb=RETRIEVAL.model_mem_mb,
        runtime=30,
    params:
        job=job(RETRIEVAL.export),
    script:
        "../scripts/export_model.py"


rule encode_texts:
    input:
        unpack(RETRIEVAL.encode_inputs),
    output:
        **PATHS.embedding_outputs("{model}", "{text_set}", "{kind}"),
    log:
        PATHS.log("encode_texts", "{model}/{text_set}/{kind}"),
    benchmark:
        PATHS.timing("encode_texts", "{model}/{text_set}/{kind}")
    wildcard_constraints:
        model=RETRIEVAL.models_of_output_regex("dense"),
    priority: RETRIEVAL.encode_priority
    conda:
        "../envs/retrieval.yaml"
    # One thread per job: two encode jobs on two cores beat one job on both, and torch slows
    # down badly when its threads share a core with another process.
    threads: 1
    resources:
        mem_mb=RETRIEVAL.model_mem_mb,
        gpu=RETRIEVAL.model_gpu,
        runtime=240,
    params:
        job=job(RETRIEVAL.encode),
    script:
        "../scripts/encode_texts.py"


# Multi-vector and sparse entries (docs/late-interaction.md): the same encoding, into rows of token vectors or
# sparse vectors with each token's span in the text.
rule encode_token_vectors:
    input:
        unpack(RETRIEVAL.encode_inputs),
    output:
        **PATHS.token_vector_outputs("{model}", "{text_set}", "{kind}"),
    log:
        PATHS.log("encode_texts", "{model}/{text_set}/{kind}"),
    benchmark:
        PATHS.timing("encode_token_vectors", "{model}/{text_set}/{kind}")
    wildcard_constraints:
        model=RETRIEVAL.models_of_output_regex("multi-vector"),
    priority: RETRIEVAL.encode_priority
    conda:
        "../envs/retrieval.yaml"
    threads: 1
    resources:
        mem_mb=RETRIEVAL.model_mem_mb,
        gpu=RETRIEVAL.model_gpu,
        runtime=240,
    params:
        job=job(RETRIEVAL.encode),
    script:
        "../scripts/encode_texts.py"


rule encode_sparse_vectors:
    input:
        unpack(RETRIEVAL.encode_inputs),
    output:
        **PATHS.sparse_vector_outputs("{model}", "{text_set}", "{kind}"),
    log:
        PATHS.log("encode_texts", "{model}/{text_set}/{kind}"),
    benchmark:
        PATHS.timing("encode_sparse_vectors", "{model}/{text_set}/{kind}")
    wildcard_constraints:
        model=RETRIEVAL.models_of_output_regex("sparse"),
    priority: RETRIEVAL.encode_priority
    conda:
        "../envs/retrieval.yaml"
    threads: 1
    resources:
        mem_mb=RETRIEVAL.model_mem_mb,
        gpu=RETRIEVAL.model_gpu,
        runtime=240,
    params:
        job=job(RETRIEVAL.encode),
    script:
        "../scripts/encode_texts.py"


rule retrieve:
    input:
        unpack(RETRIEVAL.retrieve_inputs),
        unpack(EVALUATION.first_stage_score_inputs),
    output:
        **PATHS.score_outputs("{benchmark}", "{model}", "{setting}"),
        run=PATHS.run("{benchmark}", "{model}", "{setting}"),
    log:
        PATHS.log("retrieve", "{benchmark}/{model}/{setting}"),
    benchmark:
        PATHS.timing("retrieve", "{benchmark}/{model}/{setting}")
    wildcard_constraints:
        model=PLAN.models_regex(),
    conda:
        "../envs/retrieval.yaml"
    threads: 1
    resources:
        mem_mb=RETRIEVAL.retrieve_mem_mb,
        gpu=RETRIEVAL.retrieve_gpu,
        runtime=RETRIEVAL.retrieve_runtime,
    params:
        job=job(RETRIEVAL.retrieve),
    script:
        "../scripts/retrieve.py"


rule estimate_renorm_mean:
    input:
        embeddings=PATHS.embeddings("{model}", "{collection}", "corpus"),
    output:
        **PATHS.renorm_mean("{model}", "{collection}"),
    log:
        PATHS.log("estimate_renorm_mean", "{model}/{collection}"),
    conda:
        "../envs/retrieval.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/estimate_renorm_mean.py"
