from posir.logs import log_to
from posir.metrics.measures import NDCG_10
from posir.steps.evaluation import evaluate_run

OUTPUTS = ("per_query", "bins", "summary", "bootstrap", "bootstrap_bins", "trend", "figure")

with log_to(snakemake.log[0]) as log:
    w = snakemake.wildcards
    table = evaluate_run(
        snakemake.input.qrels,
        snakemake.input.positions,
        snakemake.input.run,
        snakemake.input.get("corpus_embeddings"),
        snakemake.params.id_prefixes,
        snakemake.params.metrics,
        {name: snakemake.output[name] for name in OUTPUTS},
        title=f"{w.benchmark}: {w.model}, {w.setting}",
        languages_outside_model=snakemake.params.languages_outside_model,
        evaluated=snakemake.input.get("evaluated"),
    )
    log.info("scored %d queries; mean %s %.4f", len(table), NDCG_10.name, table[NDCG_10.column].mean())
