from posir.jobs.evaluation import PanelsJob
from posir.logs import log_to
from posir.steps.evaluation import write_languages_table

with log_to(snakemake.log[0]):
    write_languages_table(PanelsJob.of(snakemake))
