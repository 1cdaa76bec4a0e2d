"""Reading mathematics out of proof text: segments, tokens, a bounded grammar, exact values."""

from faithsieve.mathtext.ast import Chain, Expr, render, render_chain
from faithsieve.mathtext.evaluate import Limits, evaluate, to_sympy
from faithsieve.mathtext.formulas import Formula, extract_formulas, find_segments

__all__ = [
    "Chain", "Expr", "Formula", "Limits", "evaluate", "extract_formulas", "find_segments",
    "render", "render_chain", "to_sympy",
]
