"""The results contract: where every result file lives (:mod:`.paths`), the columns of every result table, derived
from the measures' declarations (:mod:`.schemas`), and the one reader and writer of result files (:mod:`.io`).

No other module opens a result file or spells a column: producers write and tables and figures read through
:mod:`.io`, naming columns by the constants of :mod:`.schemas` and of the measures (:mod:`posir.metrics`).
"""
