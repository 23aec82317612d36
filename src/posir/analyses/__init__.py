"""Analyses beside the main evaluation line: gradient saliency by token position (PosIR section 5.3)
and segment-representation similarity (Zeng et al., Appendix A.4)."""
