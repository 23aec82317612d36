# Published results as inputs and paper-grade tables (PosIR Tables 2-3).


PUBLISHED_FILES = PATHS.published_table("{published}")


rule published_table:
    input:
        results=EVALUATION.published_input,
    output:
        csv=reported(PUBLISHED_FILES["csv"], "published_table", "Tables", "published: {published}"),
        markdown=reported(PUBLISHED_FILES["markdown"], "published_table", "Tables", "published: {published}"),
    log:
        PATHS.log("published_table", "{published}"),
    conda:
        "../envs/evaluation.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        job=job(EVALUATION.published),
    script:
        "../scripts/published_table.py"


# The captions of the paper tables' outputs, one per table of PosIR.
PAPER_CAPTIONS = {
    "settings": "paper_settings",
    "ranking": "paper_ranking",
    "correlation": "paper_ranking",
    "position": "paper_position_bias",
}


rule paper_tables:
    input:
        summaries=EVALUATION.paper_summaries,
        published=EVALUATION.paper_published_files,
    output:
        **{
            key: reported(path, PAPER_CAPTIONS[key.split("_")[0]], "Paper tables", "{table}")
            for key, path in PATHS.paper_tables("{table}").items()
        },
    log:
        PATHS.log("paper_tables", "{table}"),
    conda:
        "../envs/evaluation.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        job=job(EVALUATION.paper_tables),
    script:
        "../scripts/paper_tables.py"
