"""Benchmark rewriting with verified answers (``faithsieve rewrite``): offline numerical
reparameterization of annotated GSM8K items, the RePro pipeline over an LLM and a Lean kernel,
an independent re-check of rewritten files, and the original-vs-rewritten contamination probe."""
