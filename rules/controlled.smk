# Controlled-position variants (posir.controlled): every sampled query of a benchmark measured at every position,
# everything else held equal. Each variant is a benchmark like any other (its runs and tables come from the usual
# rules); the family's rule sets the positions of the same queries side by side.


rule build_controlled_variant:
    input:
        unpack(CONTROLLED.build_inputs),
    output:
        **PATHS.benchmark_outputs("{benchmark}", extra=[CONTROLLED_TABLE]),
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


CONTROLLED_FILES = PATHS.outputs("{benchmark}", CONTROLLED_TABLES)


rule controlled_tables:
    input:
        unpack(CONTROLLED.tables_inputs),
    output:
        tests_csv=CONTROLLED_FILES["tests_csv"],
        tests_md=reported(CONTROLLED_FILES["tests_md"], "controlled", "Tables", "{benchmark}"),
        positions_csv=CONTROLLED_FILES["positions_csv"],
        comparison_csv=CONTROLLED_FILES["comparison_csv"],
        comparison_md=reported(CONTROLLED_FILES["comparison_md"], "controlled", "Tables", "{benchmark}"),
        curves=reported(CONTROLLED_FILES["curves"], "controlled", "Figures", "{benchmark}", model="all"),
        heatmap=reported(CONTROLLED_FILES["heatmap"], "controlled", "Figures", "{benchmark}", model="all"),
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


# Spread families (posir.controlled.spread): queries resting on several pieces, with their pieces together and
# apart. Each cell is a benchmark like any other; the family's distance tables set the cells side by side (its
# variants have no tables of their own).


rule build_spread_variant:
    input:
        unpack(CONTROLLED.build_inputs),
    output:
        **PATHS.benchmark_outputs("{benchmark}", extra=[CONTROLLED_TABLE, EVIDENCE]),
    log:
        PATHS.log("build_spread_variant", "{benchmark}"),
    benchmark:
        PATHS.timing("build_spread_variant", "{benchmark}")
    wildcard_constraints:
        benchmark=CONTROLLED.variants_regex(spread=True),
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
        "../scripts/build_spread_variant.py"


DISTANCE_FILES = PATHS.outputs("{benchmark}", DISTANCE_TABLES)


rule distance_tables:
    input:
        unpack(CONTROLLED.distance_tables_inputs),
    output:
        cells_csv=DISTANCE_FILES["cells_csv"],
        cells_md=reported(DISTANCE_FILES["cells_md"], "distance", "Tables", "{benchmark}"),
        tests_csv=DISTANCE_FILES["tests_csv"],
        levels_csv=DISTANCE_FILES["levels_csv"],
        single_csv=DISTANCE_FILES["single_csv"],
        tokens_csv=DISTANCE_FILES["tokens_csv"],
        shares_csv=DISTANCE_FILES["shares_csv"],
        figure=reported(DISTANCE_FILES["figure"], "distance", "Figures", "{benchmark}", model="all"),
    log:
        PATHS.log("distance_tables", "{benchmark}"),
    benchmark:
        PATHS.timing("distance_tables", "{benchmark}")
    wildcard_constraints:
        benchmark=CONTROLLED.families_regex(spread=True),
    conda:
        "../envs/retrieval.yaml"
    threads: 1
    # it loads each counted model's tokenizer with its weights (MiniLM, multilingual-e5-small: about 1 GB)
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        job=job(CONTROLLED.distance_tables),
    script:
        "../scripts/distance_tables.py"
