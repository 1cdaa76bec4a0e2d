"""The checkers, cheapest first: exact rationals (``exact``), sympy (``symbolic``), z3 (``smt``); the
registry and the portfolio that runs them (``portfolio``), the outcome memo they share (``memo``) and the
sympy checker's conversion cache (``conversions``)."""
