"""The RL grader's parts; ``faithsieve.grader`` is the public entry point (see its docstring)."""
