# Results in MTEB's format (posir.mteb_results): `snakemake mteb_export` writes a TaskResult per model and
# benchmark, and each model's model_meta.json, where mteb.ResultCache(cache_path="results/export/mteb") reads them.


rule mteb_export:
    input:
        EVALUATION.mteb_export_targets(),
    localrule: True


rule mteb_task_result:
    input:
        unpack(EVALUATION.mteb_task_inputs),
    output:
        result=PATHS.mteb_task_result("{model}", "{benchmark}"),
    log:
        PATHS.log("mteb_task_result", "{benchmark}/{model}"),
    conda:
        "../envs/export.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        job=job(EVALUATION.mteb_task),
    script:
        "../scripts/mteb_task_result.py"


rule mteb_model_meta:
    output:
        meta=PATHS.mteb_model_meta("{model}"),
    log:
        PATHS.log("mteb_model_meta", "{model}"),
    conda:
        "../envs/export.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        job=job(EVALUATION.mteb_model),
    script:
        "../scripts/mteb_model_meta.py"
