"""One module per rule group: read inputs, call the pure code, write outputs.

Rule scripts under ``scripts/`` only unpack ``snakemake.input/output/params``
and call these, so every step can also be run and tested without Snakemake.
Each module's imports are what its rule group's ``envs/<group>.yaml`` provides.
"""
