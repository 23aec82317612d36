# Published results as inputs, bootstrap intervals and paper-grade tables (PosIR Tables 2-3; issue 6).


wildcard_constraints:
    published="[^/]+",
    table="[^/]+",


rule published_table:
    input:
        results=published_input,
    output:
        csv=report(
            f"{RESULTS}/tables/published/{{published}}/main.csv",
            caption="../report/published_table.rst",
            category="Tables",
            subcategory="published: {published}",
        ),
        markdown=report(
            f"{RESULTS}/tables/published/{{published}}/main.md",
            caption="../report/published_table.rst",
            category="Tables",
            subcategory="published: {published}",
        ),
    params:
        entry=published_entry,
        metrics=METRICS_CONFIG,
    log:
        f"{RESULTS}/logs/published_table/{{published}}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/evaluation.yaml"
    script:
        "../scripts/published_table.py"


rule paper_tables:
    input:
        summaries=paper_table_summaries,
        published=paper_table_published_files,
    output:
        settings_csv=report(
            f"{RESULTS}/tables/paper/{{table}}/settings.csv",
            caption="../report/paper_settings.rst",
            category="Paper tables",
            subcategory="{table}",
        ),
        settings_md=report(
            f"{RESULTS}/tables/paper/{{table}}/settings.md",
            caption="../report/paper_settings.rst",
            category="Paper tables",
            subcategory="{table}",
        ),
        settings_tex=report(
            f"{RESULTS}/tables/paper/{{table}}/settings.tex",
            caption="../report/paper_settings.rst",
            category="Paper tables",
            subcategory="{table}",
        ),
        ranking_csv=report(
            f"{RESULTS}/tables/paper/{{table}}/ranking.csv",
            caption="../report/paper_ranking.rst",
            category="Paper tables",
            subcategory="{table}",
        ),
        ranking_md=report(
            f"{RESULTS}/tables/paper/{{table}}/ranking.md",
            caption="../report/paper_ranking.rst",
            category="Paper tables",
            subcategory="{table}",
        ),
        ranking_tex=report(
            f"{RESULTS}/tables/paper/{{table}}/ranking.tex",
            caption="../report/paper_ranking.rst",
            category="Paper tables",
            subcategory="{table}",
        ),
        correlation_csv=report(
            f"{RESULTS}/tables/paper/{{table}}/correlation.csv",
            caption="../report/paper_ranking.rst",
            category="Paper tables",
            subcategory="{table}",
        ),
        position_bias_csv=report(
            f"{RESULTS}/tables/paper/{{table}}/position_bias.csv",
            caption="../report/paper_position_bias.rst",
            category="Paper tables",
            subcategory="{table}",
        ),
        position_bias_md=report(
            f"{RESULTS}/tables/paper/{{table}}/position_bias.md",
            caption="../report/paper_position_bias.rst",
            category="Paper tables",
            subcategory="{table}",
        ),
        position_bias_tex=report(
            f"{RESULTS}/tables/paper/{{table}}/position_bias.tex",
            caption="../report/paper_position_bias.rst",
            category="Paper tables",
            subcategory="{table}",
        ),
    params:
        entry=paper_table_entry,
        summary_keys=paper_table_summary_keys,
        published=paper_table_published,
        reference=paper_table_reference,
        metrics=METRICS_CONFIG,
    log:
        f"{RESULTS}/logs/paper_tables/{{table}}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/evaluation.yaml"
    script:
        "../scripts/paper_tables.py"
