from posir.logs import log_to
from posir.steps.evaluation import score_run

with log_to(snakemake.log[0]) as log:
    table = score_run(
        snakemake.input.qrels,
        snakemake.input.positions,
        snakemake.input.run,
        snakemake.output.per_query,
        snakemake.input.get("corpus_embeddings"),
        snakemake.params.id_prefixes,
    )
    log.info("scored %d queries; mean nDCG@10 %.4f", len(table), table["ndcg@10"].mean())
