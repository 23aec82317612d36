# Queries resting on several paragraphs (posir.builders.pairs): the questions of one document whose evidence lies in
# different paragraphs, joined into one query, each also kept alone; optionally an LLM's fused question beside the
# joined one, graded like a generated query (one stage under results/generation/{benchmark}/fuse/).
from posir.builders import PAIRS
from posir.evidence import EVIDENCE, GROUPS

PAIRS_PLAN = PLAN.pairs


rule fuse_evidence_pairs:
    input:
        unpack(PAIRS_PLAN.fuse_inputs),
    output:
        **PAIRS_PLAN.fuse_outputs("{benchmark}"),
    log:
        PATHS.log("fuse_evidence_pairs", "{benchmark}"),
    benchmark:
        PATHS.timing("fuse_evidence_pairs", "{benchmark}")
    wildcard_constraints:
        benchmark=PAIRS_PLAN.fused_regex(),
    priority: TEXTS_PRIORITY
    conda:
        "../envs/retrieval.yaml"
    # The work happens on the LLM server; this job only waits on HTTP.
    threads: 1
    resources:
        mem_mb=1000,
        runtime=600,
        llm=1,
    params:
        job=job(PAIRS_PLAN.fuse),
    script:
        "../scripts/fuse_evidence_pairs.py"


rule build_evidence_pairs:
    input:
        unpack(PAIRS_PLAN.build_inputs),
    output:
        **PATHS.benchmark_outputs("{benchmark}", extra=[EVIDENCE, GROUPS]),
    log:
        PATHS.log("build_evidence_pairs", "{benchmark}"),
    benchmark:
        PATHS.timing("build_evidence_pairs", "{benchmark}")
    wildcard_constraints:
        benchmark=PLAN.benchmarks_built_by(PAIRS.name),
    priority: TEXTS_PRIORITY
    conda:
        "../envs/retrieval.yaml"
    threads: 1
    resources:
        mem_mb=input_scaled_mem_mb(150, 10),
        runtime=30,
    params:
        job=job(PAIRS_PLAN.build),
    script:
        "../scripts/build_evidence_pairs.py"
