"""Tables of results: :mod:`posir.tables.build` makes frames from frames, :mod:`posir.tables.render` lays them out
(Markdown, LaTeX); their columns are the results contract's (:mod:`posir.results`)."""
