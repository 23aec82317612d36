"""Result tables: :mod:`posir.tables.build` makes them from result frames, :mod:`posir.tables.render` lays them out.

Import the module you need; the columns of every table are named in :mod:`posir.results`.
"""

# Temporary: rules/common.smk imports PAPER_TABLE_FILES from here until the paths section of posir.results
# (being written with the workflow's new planning) takes the paper tables' files over.
from posir.tables.render import PAPER_TABLE_FILES as PAPER_TABLE_FILES
