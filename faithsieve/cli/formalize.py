"""``faithsieve formalize FILE``: every obligation of a proof as a Lean 4 statement and its refutation form.

Prints a Lean file (``--json``: one record per obligation) that a Lean user can paste into a project:
the statements ``:= by sorry``, or for each obligation that has no faithful statement, why. No Lean
is run. ``--flavour`` defaults to the settings' (``lean_mathlib``); ``--lean-version`` defaults to the
version detection finds on this machine (core statements over ``Rat`` need v4.24.0 or later).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

from faithsieve.cli.common import fail
from faithsieve.core.errors import FaithSieveError
from faithsieve.runtime.textfile import decode_utf8, os_error_line, read_utf8


def _lean_version(text: str) -> str:
    if not re.fullmatch(r"v?\d+\.\d+(\.\d+)?(-rc\d+)?", text):
        raise argparse.ArgumentTypeError(f"expected a Lean version such as v4.24.0, got {text!r}")
    return text if text.startswith("v") else "v" + text


def cmd_formalize(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from faithsieve.core.settings import Settings
    from faithsieve.lean.formalize import formalize_proof, lean_file
    from faithsieve.lean.statement import Flavour
    from faithsieve.split import proof_from_input

    try:
        settings = Settings()
        raw = decode_utf8(sys.stdin.buffer.read(), "<stdin>") if args.file == "-" else read_utf8(args.file)
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            return fail(f"{args.file}: not valid JSON ({exc.msg} at line {exc.lineno})")
        proof = proof_from_input(data, settings)
    except OSError as exc:
        return fail(os_error_line(exc))
    except ValidationError as exc:
        return fail(f"invalid FAITHSIEVE_* settings: {exc.errors()[0]['msg']}")
    except FaithSieveError as exc:
        return fail(exc.message)
    flavour: Flavour = "core" if (args.flavour or ("mathlib" if settings.lean_mathlib else "core")) == "core" else "mathlib"
    from faithsieve.lean.detect import detect

    env = detect(settings)  # file-system probes only, as in `faithsieve doctor`
    version = args.lean_version
    if version is None and flavour == "core":
        version = env.lean_version
    project = env.project
    mathlib_here = project is not None and project.exists and project.mathlib and project.mathlib_built
    items = formalize_proof(proof, flavour, version)
    if args.json:
        print(json.dumps([f.to_json() for f in items], indent=2, ensure_ascii=False))
    else:
        print(lean_file(items, flavour, version, mathlib_here), end="")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("formalize", help="print every obligation of a proof as a Lean 4 statement (and its refutation "
                                         "form), or why it cannot be rendered; runs no Lean")
    p.add_argument("file", help='JSON file with {"problem", "steps": [...]} or {"problem", "proof": "..."}; - for stdin')
    p.add_argument("--flavour", choices=("mathlib", "core"), default=None,
                   help="mathlib: import Mathlib, ℤ ℚ ℝ; core: no imports, Int and Rat (default: from the settings)")
    p.add_argument("--lean-version", type=_lean_version, default=None, metavar="v4.N",
                   help="the Lean version the statements are for (core Rat needs v4.24.0+; default: the one found here)")
    p.add_argument("--json", action="store_true", help="one JSON record per obligation instead of a Lean file")
    p.set_defaults(func=cmd_formalize)
