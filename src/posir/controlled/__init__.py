"""Controlled-position variants of a benchmark: every query measured at every position, all else held equal.

PosIR (section 4.1, 5.2) and Zeng et al. (section 3.1) read position curves off
natural data, where the evidence position comes with its query, its document
and that document's length. Here one query is measured at several positions of
*the same* text:

* :mod:`posir.text_units` (shared with the evidence-pairs builder) cuts a document into units (paragraphs at
  the source's separator, otherwise sentences) that tile it exactly;
* :mod:`posir.controlled.placement` moves the unit holding the evidence to
  target positions (move mode) or inserts it into filler from other documents
  (insert mode, a needle in a natural haystack), and recomputes the span;
* :mod:`posir.controlled.filler` picks that filler: units without the answer and
  with little lexical overlap with the query;
* :mod:`posir.controlled.sampling` samples queries stratified by length bucket
  and natural position bin, and deals them into rounds so that no corpus holds
  two sampled queries of one document;
* :mod:`posir.controlled.spec` declares a family (``builder: controlled``, its
  ``controlled`` block) and the keys of its variants, all the config needs;
* :mod:`posir.controlled.planning` plans the family: units, eligibility,
  sample, rounds and (insert mode) filler, drops counted with their reasons;
* :mod:`posir.controlled.family` builds one :class:`posir.benchmark.BuiltBenchmark`
  per (round, position[, length]) in which each sampled query's positive is its
  variant and every other document is unchanged, with the card fields;
* :mod:`posir.controlled.token_view` says where a span lies in a model's tokens.

The statistics over the resulting per-query scores are in :mod:`posir.metrics.controlled`.
"""
