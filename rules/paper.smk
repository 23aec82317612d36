# Published results as inputs and paper-grade tables (PosIR Tables 2-3).


wildcard_constraints:
    published="[^/]+",
    table="[^/]+",


rule published_table:
    input:
        results=published_input,
    output:
        csv=reported(
            f"{RESULTS}/tables/published/{{published}}/main.csv", "published_table", "Tables", "published: {published}"
        ),
        markdown=reported(
            f"{RESULTS}/tables/published/{{published}}/main.md", "published_table", "Tables", "published: {published}"
        ),
    log:
        f"{RESULTS}/logs/published_table/{{published}}.log",
    conda:
        "../envs/evaluation.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        entry=config_value("published/{published}"),
        metrics=TABLE_CONFIG,
    script:
        "../scripts/published_table.py"


# The captions of PAPER_TABLE_FILES' outputs (posir.tables), one per table of PosIR.
PAPER_CAPTIONS = {
    "settings": "paper_settings",
    "ranking": "paper_ranking",
    "correlation": "paper_ranking",
    "position": "paper_position_bias",
}


rule paper_tables:
    input:
        summaries=paper_table_summaries,
        published=paper_table_published_files,
    output:
        **{
            key: reported(path, PAPER_CAPTIONS[key.split("_")[0]], "Paper tables", "{table}")
            for key, path in paper_table_files("{table}").items()
        },
    log:
        f"{RESULTS}/logs/paper_tables/{{table}}.log",
    conda:
        "../envs/evaluation.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        entry=config_value("paper_tables/{table}"),
        summary_keys=paper_table_summary_keys,
        published=paper_table_published,
        reference=paper_table_reference,
        metrics=TABLE_CONFIG,
    script:
        "../scripts/paper_tables.py"
