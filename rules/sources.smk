# Source files: from a mirror directory (POSIR_MIRROR, config 'mirrors') or the official URL, sha256-verified.


rule fetch_source:
    output:
        file=PATHS.source("{source}", "{filename}"),
    log:
        PATHS.log("fetch_source", "{source}/{filename}"),
    priority: TEXTS_PRIORITY
    localrule: True
    conda:
        "../envs/sources.yaml"
    resources:
        mem_mb=500,
        runtime=30,
    params:
        job=job(BENCHMARKS.fetch),
    script:
        "../scripts/fetch_source.py"
