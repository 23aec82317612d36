# Why and how sure: paired tests between the models of a setting (with the setting's grid of position curves, one
# job: both read the setting's runs), gradient saliency by token position (PosIR 5.3), segment similarity
# (Zeng et al., Appendix A.4) and where a multi-vector or sparse entry's score comes from (docs/late-interaction.md).


rule setting_tables:
    input:
        scores=EVALUATION.compared_scores,
        bins=EVALUATION.aggregates_of_setting("bins"),
        bands=EVALUATION.aggregates_of_setting("bootstrap_bins"),
    output:
        tests=PATHS.significance(BENCHMARK_FOLDER, "{setting}", "tests"),
        psi=PATHS.significance(BENCHMARK_FOLDER, "{setting}", "psi"),
        markdown=reported(
            PATHS.significance(BENCHMARK_FOLDER, "{setting}", "markdown"),
            "significance",
            "Tables",
            "{benchmark}",
            setting="{setting}",
        ),
        latex=PATHS.significance(BENCHMARK_FOLDER, "{setting}", "latex"),
        figure=reported(
            PATHS.grid(BENCHMARK_FOLDER, "{setting}"),
            "position_grid",
            "Figures",
            "{benchmark}",
            model="all",
            setting="{setting}",
        ),
    log:
        PATHS.log("setting_tables", "{family}{benchmark}/{setting}"),
    benchmark:
        PATHS.timing("setting_tables", "{family}{benchmark}/{setting}")
    conda:
        "../envs/evaluation.yaml"
    resources:
        mem_mb=3000,
        runtime=60,
    params:
        job=job(EVALUATION.setting_tables),
    script:
        "../scripts/setting_tables.py"


rule saliency:
    input:
        unpack(EVALUATION.analysis_inputs),
    output:
        pairs=PATHS.saliency("{benchmark}", "{model}", "pairs"),
        bins=PATHS.saliency("{benchmark}", "{model}", "bins"),
        figure=reported(
            PATHS.saliency_figure("{benchmark}", "{model}"), "saliency", "Analyses", "{benchmark}", model="{model}"
        ),
    log:
        PATHS.log("saliency", "{benchmark}/{model}"),
    benchmark:
        PATHS.timing("saliency", "{benchmark}/{model}")
    conda:
        "../envs/retrieval.yaml"
    # backward passes: the rule that gains most from a GPU (a cuda model entry asks for one)
    threads: 2
    resources:
        mem_mb=EVALUATION.analysis_mem_mb(1000),
        gpu=RETRIEVAL.model_gpu,
        runtime=120,
    params:
        job=job(EVALUATION.saliency),
    script:
        "../scripts/saliency.py"


rule representation:
    input:
        unpack(EVALUATION.analysis_inputs),
        unpack(RETRIEVAL.analysis_encoded),
    output:
        segments=PATHS.representation("{benchmark}", "{model}", "segments"),
        summary=PATHS.representation("{benchmark}", "{model}", "summary"),
        figure=reported(
            PATHS.segments_figure("{benchmark}", "{model}"),
            "segment_similarity",
            "Analyses",
            "{benchmark}",
            model="{model}",
        ),
    log:
        PATHS.log("representation", "{benchmark}/{model}"),
    benchmark:
        PATHS.timing("representation", "{benchmark}/{model}")
    priority: LONG_ANALYSIS_PRIORITY
    conda:
        "../envs/retrieval.yaml"
    threads: 1
    resources:
        mem_mb=EVALUATION.analysis_mem_mb(500),
        gpu=RETRIEVAL.model_gpu,
        runtime=120,
    params:
        job=job(EVALUATION.representation),
    script:
        "../scripts/representation.py"


SCORE_ORIGIN_FILES = PATHS.outputs(BENCHMARK_FOLDER, SCORE_ORIGIN_TABLE)


rule score_origin:
    input:
        unpack(EVALUATION.score_origin_inputs),
    output:
        csv=reported(SCORE_ORIGIN_FILES["csv"], "score_origin", "Analyses", "{benchmark}"),
        markdown=SCORE_ORIGIN_FILES["markdown"],
        figure=reported(
            SCORE_ORIGIN_FILES["figure"],
            "score_origin",
            "Analyses",
            "{benchmark}",
            model="all",
            setting="all",
        ),
    log:
        PATHS.log("score_origin", BENCHMARK_FOLDER),
    conda:
        "../envs/evaluation.yaml"
    # One run at a time, a query at a time: products of one query's tokens with one positive's (numpy, one thread).
    threads: 1
    resources:
        mem_mb=EVALUATION.score_origin_mem_mb,
        runtime=30,
    params:
        job=job(EVALUATION.score_origin),
    script:
        "../scripts/score_origin.py"


POOLING_FILES = PATHS.outputs("{benchmark}", POOLING_TABLES)


rule pooling_table:
    input:
        unpack(EVALUATION.pooling_inputs),
    output:
        csv=POOLING_FILES["csv"],
        markdown=reported(POOLING_FILES["markdown"], "pooling", "Tables", "{benchmark}"),
        unpaired=POOLING_FILES["unpaired"],
    log:
        PATHS.log("pooling_table", "{benchmark}"),
    wildcard_constraints:
        benchmark=EVALUATION.pooling_regex(),
    conda:
        "../envs/evaluation.yaml"
    # per-query tables of a few runs and one bootstrap per pair and bucket (numpy, one thread)
    threads: 1
    resources:
        mem_mb=1500,
        runtime=30,
    params:
        job=job(EVALUATION.pooling),
    script:
        "../scripts/pooling_table.py"
