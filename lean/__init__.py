"""The Lean kernel (formalize -> align -> prove -> check over lean-interact).

Reserved: it arrives with its own issue. Until then nothing imports it and the
pipeline's checker registry (``faithsieve.obligations.checkers.register_checker``)
is where a Lean checker will plug in.
"""
