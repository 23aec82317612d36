from posir.logs import log_to
from posir.plan.jobs import SettingGridJob
from posir.steps.evaluation import plot_setting_grid

with log_to(snakemake.log[0]):
    plot_setting_grid(SettingGridJob.of(snakemake))
