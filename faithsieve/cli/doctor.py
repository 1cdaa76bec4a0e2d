"""``faithsieve doctor``: report which checkers and backends can run here (``--json``, ``--strict``)."""

from __future__ import annotations

import argparse
import json
from typing import Any


def cmd_doctor(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from faithsieve.core.settings import Settings, settings_error_line
    from faithsieve.doctor import (  # httpx and detection: not at CLI start-up
        DoctorCheck,
        render_text,
        run_doctor,
    )

    bad_settings = None
    try:
        settings = Settings()
    except ValidationError as exc:  # report it, then check the rest with the defaults
        bad_settings = DoctorCheck(name="settings", status="fail", summary=settings_error_line(exc))
        settings = Settings.model_construct()
    report = run_doctor(settings)
    if bad_settings is not None:
        report.checks.insert(0, bad_settings)
    if args.json:
        print(json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        print(render_text(report))
    return 1 if args.strict and report.failed else 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("doctor", help="report what can run here: z3, sympy, LLM endpoint, Lean toolchain, Mathlib, "
                                      "Lean server")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when a required or configured component does not work (default: always exit 0)")
    p.set_defaults(func=cmd_doctor)
