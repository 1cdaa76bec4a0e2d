"""A search for formula bombs: short claims (at most 200 characters) whose check is slow.

A generator writes claims of the kinds that have made one check run unbounded: powers of sums inside
every function and bar the formula reader knows (plain ``sqrt(…)``, ``\\sqrt{…}``, ``\\sqrt[3]{…}``,
``√(…)``, ``abs``/``|…|``/``\\left|…\\right|``/``\\lvert…\\rvert``, ``floor``/``ceil`` and their
LaTeX brackets, ``exp``/``ln``/``log``/trigonometry, ``\\frac``, ``\\binom``), nested radicals, power
towers and factorials of sums, each written as a closed claim (``… = 5``) and as an identity in ``x``.
Each claim is checked as a one-step proof by the offline pipeline (``faithsieve.pipeline.localize``)
in a child process with an address-space limit (``--memory-mb``); a claim past ``--timeout-s`` is
killed there (the child is restarted) and counted at the timeout. The child also times the service's
lane estimate (``text_cost`` under ``SERVICE``) and records the lane.

Prints the slowest ``--top`` checks (seconds, peak RSS of the child during that check, the lane, the
verdict) and, with ``--json``, writes every measurement.

    python bench/bomb_search.py [--family formulas|calculus|derivations] [--timeout-s 10] [--memory-mb 3000] [--top 10]
                                [--json out.json]

Run under ``prlimit --as=...`` / ``timeout`` on a shared machine: the child limits itself, this
parent only waits.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

MAX_CHARS = 200

RADICAL_SUMS = [
    "sqrt(2)+sqrt(3)",
    "sqrt(2)+sqrt(3)+sqrt(5)",
    "sqrt(2)+sqrt(3)+sqrt(5)+sqrt(7)+sqrt(11)+sqrt(13)",
]
LATEX_RADICAL_SUMS = [
    r"\sqrt{2}+\sqrt{3}+\sqrt{5}",
    r"\sqrt{2}+\sqrt{3}+\sqrt{5}+\sqrt{7}+\sqrt{11}+\sqrt{13}",
]
VARIABLE_SUMS = ["x+1", "a+b+c+d"]
EXPONENTS = ["12", "60"]

# a wrapper applied to the power P, in plain text and in LaTeX: every function and bar the reader knows
PLAIN_WRAPPERS = ["sqrt({P})", "√({P})", "abs({P})", "|{P}|", "floor({P})", "ceil({P})", "exp({P})",
                  "ln({P})", "log({P})", "sin({P})", "cos({P})", "tan({P})", "({P})!", "sqrt(sqrt({P}))",
                  "2*sqrt({P})+1"]
LATEX_WRAPPERS = [r"\sqrt{{{P}}}", r"\sqrt[3]{{{P}}}", r"\left|{P}\right|", r"\lvert {P} \rvert", r"|{P}|",
                  r"\lfloor {P} \rfloor", r"\lceil {P} \rceil", r"\exp\left({P}\right)", r"\ln\left({P}\right)",
                  r"\sin\left({P}\right)", r"\frac{{{P}}}{{2}}", r"\binom{{{P}}}{{2}}", r"\left({P}\right)!",
                  r"\sqrt{{\left|{P}\right|}}"]


def _plain_powers() -> list[str]:
    out = []
    for s, k in itertools.product(RADICAL_SUMS + VARIABLE_SUMS, EXPONENTS):
        out.append(f"({s})^{k}")
    out += ["(sqrt(2)+sqrt(3))^(2^5)", "((sqrt(2)+sqrt(3))^8)^8", "(x+1)^(2^5)"]
    return out


def _latex_powers() -> list[str]:
    out = []
    for s, k in itertools.product(LATEX_RADICAL_SUMS + ["x+y+1"], ["60"]):
        out.append(f"\\left({s}\\right)^{{{k}}}")
    return out


def _others() -> list[str]:
    """Nested radicals, towers, factorials of sums, written out whole."""
    nested = "sqrt(2+sqrt(3+sqrt(5+sqrt(7+sqrt(11)))))"
    return [
        f"({nested})^60 = 5", f"sqrt(({nested})^40) = 5", f"{nested}^99 = 5",
        r"\left(\sqrt{2+\sqrt{3+\sqrt{5+\sqrt{7}}}}\right)^{60} = 5",
        "2^2^2^2^2 = 5", "2^(2^(2^(2^2))) = 5", "9^9^9 = 5", "(1+sqrt(2))^(2^(2^3)) = 5",
        "sqrt(2)^sqrt(2)^sqrt(2)^sqrt(2) = 5", "(sqrt(2)+1)^(sqrt(2)+1)^99 = 5",
        "(10+20+30)! = 5", "(999+1)! = 5", "(sqrt(2)+sqrt(3))! = 5", "((3)!)!)! = 5", "((3!)!)! = 5",
        "(2+3)!^99 = 5", "binom(999+1, 500) = 5", "(x+1)!^30 = x", r"\left(\left(3!\right)!\right)! = 5",
        "exp(exp(exp(3))) = 5", "sin(10^10^10) = 5", "sqrt(2)^9999 = 5", "(sqrt(2)+sqrt(3))^9999 = 5",
        "|(x+1)^60| = |(x-1)^60|", "sqrt((x+y+1)^60) = (x+y+1)^30", "abs((a+b+c+d)^30) = 1",
    ]


# the calculus reader: values sympy builds exactly and is then asked to evaluate (issue 38)
TOWERS = [r"e^{e^{e^{x}}}", r"\exp(\exp(\exp(x)))", r"e^{e^{x}}", r"e^{x^{24}}", r"\sin(e^{e^{x}})",
          r"x^{x^{x}}", r"\ln(\ln(\ln(x)))", r"\tan(1000000x)", r"(x+1)^{24}", r"e^{e^{x^{2}}}"]
POINTS = ["2", "100", "10^{6}", r"e^{e^{5}}", r"2^{2^{10}}"]
HUGE_BOUNDS = [r"e^{e^{e^{10}}}", r"e^{e^{e^{3}}}", r"10^{1000}", r"e^{10^{4}}", r"2^{2^{14}}", r"e^{e^{20}}"]
INTEGRANDS = [r"\frac{1}{x}", r"e^{x}", r"\cos x", r"x^{2}", r"\sin(1000000x)", r"e^{e^{x}}"]
LIMIT_BODIES = [r"\left(1+\frac{1}{x}\right)^{x}", r"\frac{e^{e^{x}}}{x}", r"\frac{\sin x}{x}", r"x^{24}e^{-x}",
                r"e^{e^{e^{x}}}", r"\frac{\ln x}{x}"]
LIMIT_POINTS = [r"\infty", "0", r"e^{e^{e^{5}}}", r"10^{100}", "1"]
ANTIDERIVATIVES = [r"\tan(1000000x)", r"\sin(10^{9}x)", r"e^{e^{e^{x}}}", r"(x+1)^{24}", r"\sin(x)^{24}",
                   r"\tan(x)^{20}", r"\cos(1000x)^{2}", r"\ln(\ln(x))", r"\sin(\sin(\sin(x)))"]
ANTI_INTEGRANDS = [r"\cos x", r"e^{x}", r"\frac{1}{x}", r"x^{2}"]


def calculus_claims() -> list[str]:
    """Derivatives at points (written out and through a defined function), definite integrals with huge
    bounds, limits and antiderivatives, towers inside each. A claim with a newline is a proof of one
    step per line (``f(x) = …`` then ``f'(P) = 1``)."""
    out: list[str] = []
    for body, pt in itertools.product(TOWERS, POINTS):
        out.append(f"$\\left.\\frac{{d}}{{dx}} {body}\\right|_{{x={pt}}} = 1$")
        out.append(f"Let $f(x) = {body}$.\nThen $f'({pt}) = 1$.")
        out.append(f"Let $f(x) = {body}$.\nThen $f''({pt}) = 1$.")
    for lo, hi, f in itertools.product(["1", "0"], HUGE_BOUNDS, INTEGRANDS):
        out.append(f"$\\int_{{{lo}}}^{{{hi}}} {f}\\,dx = 1$")
    for body, pt in itertools.product(LIMIT_BODIES, LIMIT_POINTS):
        out.append(f"$\\lim_{{x \\to {pt}}} {body} = 1$")
    for f, F in itertools.product(ANTI_INTEGRANDS, ANTIDERIVATIVES):
        out.append(f"$\\int {f}\\,dx = {F} + C$")
    for body in TOWERS:
        out.append(f"$\\frac{{d}}{{dx}} {body} = {body}$")
        out.append(f"$\\int {body}\\,dx = {body} + C$")
    return out


# the z3 checker: a relation derived from the one before it (a proof of two steps), non-linear in several
# real variables, where no fast path decides and the solver works until its wall-clock limit
DERIVATIONS = [
    ("x^3 y^2 - 7x y^3 + 5x^2 - y = 3", "x^5 y - 11 x^2 y^4 + x^3 = 2y + 1"),
    ("x^{12} + y^{12} - 3x^5 y^7 + 2 x y = 1", "x^{11} y - 7 y^{10} x^2 + 5x = 2"),
    ("a^3 + b^3 + c^3 - 3abc = 1", "a^5 b + b^5 c + c^5 a = 2"),
    ("x^2 + y^2 + z^2 + w^2 = 1", "x^3 y + y^3 z + z^3 w + w^3 x = 1"),
    ("x^4 y^3 z - 3x y^5 + 7 z^4 x - 2 = 0", "x^3 z^5 - 5 y^2 z^3 + x y z = 4"),
    ("x^5 - x + 1 = 0", "x^{7} - x^3 + x^2 = 1"),
]


def derivation_claims() -> list[str]:
    """Each premise, then the claim derived from it (``We are given $P$.`` / ``Then $C$.``)."""
    return [f"We are given ${p}$.\nThen ${c}$." for p, c in DERIVATIONS]


def claims(family: str = "formulas") -> list[str]:
    """Every claim of the search, at most ``MAX_CHARS`` characters, without repeats."""
    out: list[str] = []
    if family == "derivations":
        return [c for c in derivation_claims() if len(c) <= MAX_CHARS]
    if family == "calculus":
        out = calculus_claims()
        seen0: set[str] = set()
        return [c for c in out if len(c) <= MAX_CHARS and not (c in seen0 or seen0.add(c))]  # type: ignore[func-returns-value]
    for p, w in itertools.product(_plain_powers(), PLAIN_WRAPPERS):
        f = w.replace("{P}", p)
        out.append(f"{f} = 5")
        if any(v in p for v in "xa"):  # an identity in the variables: the symbolic checkers' path
            out.append(f"{f} = {f}+1")
    for p, w in itertools.product(_latex_powers(), LATEX_WRAPPERS):
        f = w.format(P=p)
        out += [f"\\({f} = 5\\)"]
    out += _others()
    seen: set[str] = set()
    return [c for c in out if len(c) <= MAX_CHARS and not (c in seen or seen.add(c))]  # type: ignore[func-returns-value]


# ---------------------------------------------------------------------------------------------
# the child: reads one claim per line, checks it, answers one JSON line
# ---------------------------------------------------------------------------------------------

def _peak_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def _reset_peak() -> None:
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS


def child(memory_mb: int) -> None:
    if memory_mb:
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb * 1 << 20, memory_mb * 1 << 20))
    from faithsieve.core.proof import Proof, Step
    from faithsieve.mathtext.cost import SERVICE, text_cost
    from faithsieve.pipeline import localize

    for warm in ("1 + 1 = 2", "sqrt(2)*sqrt(3) = sqrt(6)", "sqrt((sqrt(2)+1)^2) = 3", "(x+1)^2 = x^2+2x+1",
                 "sin(x)^2 = 1 - cos(x)^2", "exp(2) = 7"):  # warm: imports, first sympy, z3 and radical calls
        localize(Proof(problem="p", steps=(Step(index=1, text=warm),)))
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        text = json.loads(line)
        _reset_peak()
        t0 = time.perf_counter()
        try:
            lane = "heavy" if text_cost(text, SERVICE) is not None else "light"
        except Exception as exc:  # noqa: BLE001 - recorded, the search goes on
            lane = f"error {type(exc).__name__}"
        t1 = time.perf_counter()
        try:
            steps = tuple(Step(index=i + 1, text=t) for i, t in enumerate(text.split("\n")))
            v = localize(Proof(problem="p", steps=steps))
            verdict = v.verdict
            statuses = sorted({ev.status for st in v.steps for ev in st.evidence})
        except MemoryError:
            verdict, statuses = "memory", []
        except Exception as exc:  # noqa: BLE001
            verdict, statuses = f"error {type(exc).__name__}", []
        t2 = time.perf_counter()
        print(json.dumps({"lane": lane, "lane_s": t1 - t0, "check_s": t2 - t1, "verdict": verdict,
                          "evidence": statuses, "peak_mb": _peak_kib() / 1024}), flush=True)


class Child:
    """The killable child process that checks claims one at a time."""

    def __init__(self, memory_mb: int) -> None:
        self.memory_mb = memory_mb
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, __file__, "--child", "--memory-mb", str(self.memory_mb)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        assert self.proc.stdout is not None
        self.proc.stdout.readline()

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def check(self, text: str, timeout_s: float) -> dict[str, Any]:
        import selectors

        if self.proc is None:
            self.start()
        assert self.proc is not None and self.proc.stdin is not None and self.proc.stdout is not None
        t0 = time.perf_counter()
        self.proc.stdin.write(json.dumps(text) + "\n")
        self.proc.stdin.flush()
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        ready = sel.select(timeout_s)
        sel.close()
        if not ready:
            self.kill()
            return {"lane": "?", "lane_s": None, "check_s": timeout_s, "verdict": "killed at the timeout",
                    "evidence": [], "peak_mb": None}
        line = self.proc.stdout.readline()
        if not line:  # the child died (memory limit hit outside Python's reach)
            self.kill()
            return {"lane": "?", "lane_s": None, "check_s": time.perf_counter() - t0, "verdict": "child died",
                    "evidence": [], "peak_mb": None}
        out: dict[str, Any] = json.loads(line)
        return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--timeout-s", type=float, default=10.0, help="a check past this is killed (default 10)")
    ap.add_argument("--memory-mb", type=int, default=3000, help="address-space limit of the child (default 3000)")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--limit", type=int, default=0, help="check only the first N claims (0: all)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--family", choices=("formulas", "calculus", "derivations"), default="formulas",
                    help="formulas: powers of sums in every function and bar; calculus: derivatives at points, "
                         "definite integrals with huge bounds, limits, antiderivatives, towers inside each; "
                         "derivations: non-linear relations derived from the one before (z3)")
    args = ap.parse_args()
    if args.child:
        child(args.memory_mb)
        return 0
    todo = claims(args.family)[: args.limit or None]
    child_proc = Child(args.memory_mb)
    rows = []
    t0 = time.perf_counter()
    try:
        for text in todo:
            rows.append({"claim": text, **child_proc.check(text, args.timeout_s)})
    finally:
        child_proc.kill()
    wall = time.perf_counter() - t0
    rows.sort(key=lambda r: -float(r["check_s"]))
    slow = [r for r in rows if r["check_s"] > 0.5]
    print(f"{len(rows)} claims of at most {MAX_CHARS} characters in {wall:.1f} s; {len(slow)} took over 0.5 s; "
          f"lane estimate at most {max((r['lane_s'] or 0) for r in rows) * 1000:.1f} ms")
    print(f"{'check s':>8} {'peak MB':>8} {'lane':>6}  verdict / evidence  claim")
    for r in rows[: args.top]:
        peak = f"{r['peak_mb']:.0f}" if r["peak_mb"] is not None else "-"
        ev = ",".join(r["evidence"])
        print(f"{r['check_s']:8.2f} {peak:>8} {r['lane']:>6}  {r['verdict']}/{ev}  {r['claim'][:110]}")
    heavy_fast = sum(1 for r in rows if r["lane"] == "light" and r["check_s"] > 0.5)
    print(f"slow claims (> 0.5 s) the lane estimate called light: {heavy_fast}")
    if args.json:
        Path(args.json).write_text(json.dumps({"wall_s": wall, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
