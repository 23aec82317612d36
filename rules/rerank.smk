# Reranking pipelines (posir.rerank): a first stage's run reordered by a second-stage scorer, on all or a stratified
# sample of the queries. The run lands where a model's would, so scoring, tables and figures treat it alike.


rule rerank:
    input:
        unpack(RETRIEVAL.rerank_inputs),
    output:
        **PATHS.rerank_outputs("{benchmark}", "{model}", "{setting}"),
    log:
        PATHS.log("rerank", "{benchmark}/{model}/{setting}"),
    benchmark:
        PATHS.timing("rerank", "{benchmark}/{model}/{setting}")
    wildcard_constraints:
        model=PLAN.pipelines_regex(),
    conda:
        "../envs/retrieval.yaml"
    threads: 1
    resources:
        mem_mb=RETRIEVAL.rerank_mem_mb,
        gpu=RETRIEVAL.second_stage_gpu,
        runtime=240,
    params:
        job=job(RETRIEVAL.rerank),
    script:
        "../scripts/rerank.py"
