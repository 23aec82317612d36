# Source files: from a mirror directory (POSIR_MIRROR, config 'mirrors') or the official URL, sha256-verified.


rule fetch_source:
    output:
        f"{RESULTS}/sources/{{source}}/{{filename}}",
    log:
        f"{RESULTS}/logs/fetch_source/{{source}}/{{filename}}.log",
    localrule: True
    conda:
        "../envs/sources.yaml"
    resources:
        mem_mb=500,
        runtime=30,
    params:
        entry=config_value("sources/{source}"),
        mirrors=config["mirrors"],
    script:
        "../scripts/fetch_source.py"
