# Reranking pipelines (posir.rerank): a first stage's run reordered by a second-stage scorer, on all or a stratified
# sample of the queries. The run lands where a model's would, so scoring, tables and figures treat it alike.


rule rerank:
    input:
        unpack(rerank_inputs),
    output:
        run=f"{RESULTS}/runs/{{benchmark}}/{{model}}/{{setting}}.trec",
        evaluated=f"{RESULTS}/runs/{{benchmark}}/{{model}}/{{setting}}.queries.tsv",
        card=f"{RESULTS}/runs/{{benchmark}}/{{model}}/{{setting}}.card.json",
    log:
        f"{RESULTS}/logs/rerank/{{benchmark}}/{{model}}/{{setting}}.log",
    benchmark:
        f"{RESULTS}/timing/rerank/{{benchmark}}/{{model}}/{{setting}}.tsv"
    wildcard_constraints:
        model=names_regex(PIPELINES),
    conda:
        "../envs/retrieval.yaml"
    threads: 1
    resources:
        mem_mb=rerank_mem_mb,
        gpu=second_stage_gpu,
        runtime=240,
    params:
        pipeline=pipeline_entry,
        scorer=second_stage,
        models=second_stage_models,
        id_prefixes=corpus_id_prefixes,
        llm=second_stage_llm,
        score_cache=SCORE_CACHE,
        embedding_cache=EMBEDDING_CACHE,
    script:
        "../scripts/rerank.py"
