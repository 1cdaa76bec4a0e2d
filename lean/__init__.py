"""The Lean kernel (formalize -> align -> prove -> check).

``interface``: the kernel protocol the pipeline receives and ``UnavailableKernel``; ``backend``,
``local`` (lean-interact) and ``remote`` (Kimina): checking snippets; ``render``, ``terms``,
``domains``, ``intform``, ``statement``: obligations as Lean statements (pure); ``kernel``: the
statement and proof loops; ``checker``: the ``lean`` checker; ``formalize``: a proof's obligations
as a Lean file (``faithsieve formalize``). See docs/lean.md.
"""
