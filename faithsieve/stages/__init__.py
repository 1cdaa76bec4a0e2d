"""The method's stages, one protocol each (``base``), one module per implementation.

decompose (rule / llm / coarse) -> scan (all edges / llm suspicion + audit window + review)
-> type obligations -> verify (our checkers, the kernel behind the faithfulness gate)
-> fuse evidence into a verdict. ``faithsieve.pipeline`` composes them.
"""
