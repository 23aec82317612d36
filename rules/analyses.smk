# Why and how sure: paired tests between the models of a setting, gradient saliency by token position
# (PosIR 5.3) and segment similarity (Zeng et al., Appendix A.4).


rule significance:
    input:
        scores=EVALUATION.compared_scores,
    output:
        tests=PATHS.significance("{benchmark}", "{setting}", "csv"),
        psi=PATHS.significance("{benchmark}", "{setting}", "psi.csv"),
        markdown=reported(
            PATHS.significance("{benchmark}", "{setting}", "md"),
            "significance",
            "Tables",
            "{benchmark}",
            setting="{setting}",
        ),
        latex=PATHS.significance("{benchmark}", "{setting}", "tex"),
    log:
        PATHS.log("significance", "{benchmark}/{setting}"),
    benchmark:
        PATHS.timing("significance", "{benchmark}/{setting}")
    conda:
        "../envs/evaluation.yaml"
    resources:
        mem_mb=3000,
        runtime=60,
    params:
        job=job(EVALUATION.significance),
    script:
        "../scripts/significance.py"


rule saliency:
    input:
        unpack(EVALUATION.analysis_inputs),
    output:
        pairs=PATHS.saliency("{benchmark}", "{model}", "pairs"),
        bins=PATHS.saliency("{benchmark}", "{model}", "bins"),
        figure=reported(
            PATHS.figure("{benchmark}", "saliency-{model}.png"), "saliency", "Analyses", "{benchmark}", model="{model}"
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
    output:
        segments=PATHS.representation("{benchmark}", "{model}", "segments"),
        summary=PATHS.representation("{benchmark}", "{model}", "summary"),
        figure=reported(
            PATHS.figure("{benchmark}", "segments-{model}.png"),
            "segment_similarity",
            "Analyses",
            "{benchmark}",
            model="{model}",
        ),
    log:
        PATHS.log("representation", "{benchmark}/{model}"),
    benchmark:
        PATHS.timing("representation", "{benchmark}/{model}")
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
