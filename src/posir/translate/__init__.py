"""Translating a benchmark into other languages (PosIR section 3.4, Appendix C).

* :mod:`posir.translate.backends`: the translators (``apertium``, ``llm``,
  ``parallel``), one interface, one result type;
* :mod:`posir.translate.apertium`: Debian's rule-based MT in null-flush batches;
* :mod:`posir.translate.cache`: the on-disk translation cache (text hash keyed);
* :mod:`posir.translate.filters`: fixing and filtering (Appendix C.5): prefix
  removal, refusal detection, token-length IQR outliers, cascading deletion;
* :mod:`posir.translate.align`: paragraph-wise translation units and span mapping;
* :mod:`posir.translate.judge`: the LLM quality judge (Appendix C.1);
* :mod:`posir.translate.spec`: the config of a translation entry.

The stage itself (read the source variant, translate, filter, write the
contract) is :func:`posir.steps.translation.translate_benchmark`.
"""
