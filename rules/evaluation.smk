# Scoring runs per query, aggregating into bins and buckets (PosIR 5.2), and the tables and figures of a benchmark.
# A first stage's run is scored by its own retrieve job; score_run scores a pipeline's reranked run. Each run's
# summary, trend tests and position figure are its benchmark's analysis job (a rule per benchmark, below).


rule score_run:
    input:
        unpack(EVALUATION.score_inputs),
    output:
        **PATHS.score_outputs("{benchmark}", "{model}", "{setting}"),
    log:
        PATHS.log("score_run", "{benchmark}/{model}/{setting}"),
    wildcard_constraints:
        model=PLAN.pipelines_regex(),
    conda:
        "../envs/evaluation.yaml"
    # Peak RSS measured: 1097 MB for 330 MB of input (a 1000-deep run of 10570 queries), ~3 MB per MB.
    resources:
        mem_mb=input_scaled_mem_mb(150, 3),
        runtime=15,
    params:
        job=job(EVALUATION.score),
    script:
        "../scripts/score_run.py"


# A Snakemake rule's outputs follow from its wildcards, and this job writes files of several runs: so a rule per part
# of a benchmark's runs (posir.plan.evaluation.RunAnalysis says why one job for several runs).
for rule_name, analysis in EVALUATION.run_analyses.items():

    rule:
        name:
            rule_name
        input:
            **EVALUATION.run_analysis_inputs(analysis),
        output:
            **EVALUATION.run_analysis_outputs(analysis),
            figures=[
                reported(
                    PATHS.run_figure(analysis.benchmark, model, setting),
                    "position_curve",
                    "Figures",
                    analysis.benchmark,
                    model=model,
                    setting=setting,
                )
                for model, setting in analysis.labels()
            ],
        log:
            PATHS.log("analyse_runs", analysis.log_key()),
        conda:
            "../envs/evaluation.yaml"
        # One run's per-query table and its permutation batches at a time (posir.metrics.resampling.CHUNK_ENTRIES);
        # each run's trend tests and figure take a few seconds.
        resources:
            mem_mb=1000,
            runtime=10 + len(analysis.runs),
        params:
            job=job(EVALUATION.run_analysis(analysis)),
        script:
            "../scripts/analyse_runs.py"


MAIN_FILES = PATHS.outputs(BENCHMARK_FOLDER, MAIN_TABLE)


rule main_table:
    input:
        summaries=EVALUATION.aggregates_of_benchmark("summary"),
        bootstraps=EVALUATION.aggregates_of_benchmark("bootstrap"),
        trends=EVALUATION.aggregates_of_benchmark("trend"),
    output:
        csv=reported(MAIN_FILES["csv"], "main_table", "Tables", "{benchmark}"),
        markdown=reported(MAIN_FILES["markdown"], "main_table", "Tables", "{benchmark}"),
        long=MAIN_FILES["long"],
        trends=MAIN_FILES["trends"],
        trends_markdown=reported(MAIN_FILES["trends_markdown"], "trend_table", "Tables", "{benchmark}"),
    log:
        PATHS.log("main_table", BENCHMARK_FOLDER),
    conda:
        "../envs/evaluation.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        job=job(EVALUATION.panels),
    script:
        "../scripts/main_table.py"


rule plot_position_grid:
    input:
        bins=EVALUATION.aggregates_of_benchmark("bins"),
        bands=EVALUATION.aggregates_of_benchmark("bootstrap_bins"),
    output:
        figure=reported(
            PATHS.grid(BENCHMARK_FOLDER),
            "position_grid",
            "Figures",
            "{benchmark}",
            model="all",
            setting="all",
        ),
    log:
        PATHS.log("plot_position_grid", BENCHMARK_FOLDER),
    conda:
        "../envs/evaluation.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        job=job(EVALUATION.panels),
    script:
        "../scripts/plot_position_grid.py"


LANGUAGES_FILES = PATHS.outputs(BENCHMARK_FOLDER, LANGUAGES_TABLE)


rule languages_table:
    input:
        summaries=EVALUATION.aggregates_of_benchmark("summary"),
    output:
        csv=reported(LANGUAGES_FILES["csv"], "languages_table", "Tables", "{benchmark}"),
        markdown=reported(LANGUAGES_FILES["markdown"], "languages_table", "Tables", "{benchmark}"),
    log:
        PATHS.log("languages_table", BENCHMARK_FOLDER),
    conda:
        "../envs/evaluation.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        job=job(EVALUATION.panels),
    script:
        "../scripts/languages_table.py"


EXPOSURE_FILES = PATHS.outputs(BENCHMARK_FOLDER, EXPOSURE_TABLES)


rule exposure:
    input:
        unpack(EVALUATION.exposure_inputs),
    output:
        exposure_csv=reported(EXPOSURE_FILES["exposure_csv"], "exposure", "Tables", "{benchmark}"),
        exposure_markdown=EXPOSURE_FILES["exposure_markdown"],
        peer_csv=EXPOSURE_FILES["peer_csv"],
        peer_markdown=EXPOSURE_FILES["peer_markdown"],
        pairs_csv=EXPOSURE_FILES["pairs_csv"],
        pairs_markdown=EXPOSURE_FILES["pairs_markdown"],
        figure=reported(
            EXPOSURE_FILES["figure"],
            "exposure",
            "Figures",
            "{benchmark}",
            model="all",
            setting="all",
        ),
    log:
        PATHS.log("exposure", BENCHMARK_FOLDER),
    conda:
        "../envs/evaluation.yaml"
    # One run at a time, read whole in columns (posir.results.runs.iter_rankings), and its per-query measures: peak RSS
    # measured 623 MB over squad-long's 345 MB runs.
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        job=job(EVALUATION.exposure),
    script:
        "../scripts/exposure.py"


LANGUAGE_BIAS_FILES = PATHS.outputs(BENCHMARK_FOLDER, LANGUAGE_BIAS_TABLE)


rule language_bias:
    input:
        runs=EVALUATION.one_vs_many_runs,
    output:
        csv=reported(LANGUAGE_BIAS_FILES["csv"], "language_bias", "Tables", "{benchmark}"),
        markdown=LANGUAGE_BIAS_FILES["markdown"],
        figure=reported(
            LANGUAGE_BIAS_FILES["figure"],
            "language_bias",
            "Figures",
            "{benchmark}",
            model="all",
            setting="one-vs-many",
        ),
    log:
        PATHS.log("language_bias", BENCHMARK_FOLDER),
    conda:
        "../envs/evaluation.yaml"
    # Peak RSS measured: 251 MB over 2.7 GB of runs (one at a time, read in columns; only the top 100 counted).
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        job=job(EVALUATION.language_bias),
    script:
        "../scripts/language_bias.py"


rule position_groups:
    input:
        unpack(EVALUATION.position_groups_inputs),
    output:
        csv=reported(PATHS.position_groups("{benchmark}")["csv"], "position_groups", "Tables", "{benchmark}"),
        markdown=reported(PATHS.position_groups("{benchmark}")["markdown"], "position_groups", "Tables", "{benchmark}"),
        latex=PATHS.position_groups("{benchmark}")["latex"],
        figure=reported(
            PATHS.position_groups("{benchmark}")["figure"],
            "position_groups",
            "Figures",
            "{benchmark}",
            model="all",
            setting="all",
        ),
    log:
        PATHS.log("position_groups", "{benchmark}"),
    conda:
        "../envs/evaluation.yaml"
    # One run's per-query table at a time; its bootstrap draws in chunks (posir.metrics.resampling.CHUNK_ENTRIES).
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        job=job(EVALUATION.position_groups),
    script:
        "../scripts/position_groups.py"
