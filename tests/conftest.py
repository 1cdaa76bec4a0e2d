"""Shared test configuration. No fixture clears process state: the outcome memo and the conversion
cache belong to the checkers that own them (``pipeline.build_checkers``), so a test that builds its
own checkers starts with empty ones."""
