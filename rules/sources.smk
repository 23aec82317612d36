rule fetch_source:
    output:
        f"{RESULTS}/sources/{{source}}/{{filename}}",
    params:
        entry=source_entry,
        mirrors=config.get("mirrors", []),
    log:
        f"{RESULTS}/logs/fetch_source/{{source}}/{{filename}}.log",
    resources:
        mem_mb=500,
        runtime=30,
    localrule: True
    conda:
        "../envs/sources.yaml"
    script:
        "../scripts/fetch_source.py"
