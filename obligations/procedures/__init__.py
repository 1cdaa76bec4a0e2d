"""The decision procedures, each under its own name (``registry``: name -> procedure, the evidence's
``method``), exact where they can be: polynomial and rational-function arithmetic (``polynomials``,
``fastpaths``, ``ratfunc``, ``freevar``, ``varying``, ``radicals``, ``intfuncs``), calculus with sympy
(``calculus``), and derivations without a solver (``cleared``, ``witness``, ``quadratics``, ``piecewise``,
``sections`` over ``lines`` and ``realroots``, ``ordering``)."""
