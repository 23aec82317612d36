"""One module per backend: the code that turns an entry's texts into what its backend gives (dense vectors, token
vectors, sparse vectors) or ranks a corpus itself (BM25, MTEB's search models). The table of which module serves which
(backend, output), and the version of what it gives, is :mod:`posir.models.declarations.backends`."""
