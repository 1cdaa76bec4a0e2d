"""The ``faithsieve`` command line: one module per subcommand, rendering only (the logic lives in
the rooms below). ``main`` builds the parser on first call, so importing a part of this package
stays cheap."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """Run the command line (the ``faithsieve`` console script)."""
    from faithsieve.cli.commands import main as run

    return run(argv)
