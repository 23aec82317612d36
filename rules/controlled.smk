# Controlled-position variants (posir.controlled): every sampled query of a benchmark measured at every position,
# everything else held equal. Each variant is a benchmark like any other (its runs and tables come from the usual
# rules); the family's rule sets the positions of the same queries side by side.


rule build_controlled_variant:
    input:
        unpack(CONTROLLED.build_inputs),
    output:
        **PATHS.benchmark_outputs("{benchmark}", extra=["controlled.tsv"]),
    log:
        PATHS.log("build_controlled_variant", "{benchmark}"),
    benchmark:
        PATHS.timing("build_controlled_variant", "{benchmark}")
    wildcard_constraints:
        benchmark=CONTROLLED.variants_regex(),
    priority: TEXTS_PRIORITY
    conda:
        "../envs/retrieval.yaml"
    threads: 1
    resources:
        mem_mb=input_scaled_mem_mb(300, 20),
        runtime=30,
    params:
        job=job(CONTROLLED.build),
    script:
        "../scripts/build_controlled_variant.py"


rule controlled_tables:
    input:
        unpack(CONTROLLED.tables_inputs),
    output:
        tests_csv=PATHS.table("{benchmark}", "controlled.csv"),
        tests_md=reported(PATHS.table("{benchmark}", "controlled.md"), "controlled", "Tables", "{benchmark}"),
        positions_csv=PATHS.table("{benchmark}", "controlled_positions.csv"),
        comparison_csv=PATHS.table("{benchmark}", "natural_vs_controlled.csv"),
        comparison_md=reported(
            PATHS.table("{benchmark}", "natural_vs_controlled.md"), "controlled", "Tables", "{benchmark}"
        ),
        curves=reported(
            PATHS.figure("{benchmark}", "controlled.png"), "controlled", "Figures", "{benchmark}", model="all"
        ),
        heatmap=reported(
            PATHS.figure("{benchmark}", "controlled_heatmap.png"), "controlled", "Figures", "{benchmark}", model="all"
        ),
    log:
        PATHS.log("controlled_tables", "{benchmark}"),
    wildcard_constraints:
        benchmark=CONTROLLED.families_regex(),
    conda:
        "../envs/retrieval.yaml"
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        job=job(CONTROLLED.tables),
    script:
        "../scripts/controlled_tables.py"
