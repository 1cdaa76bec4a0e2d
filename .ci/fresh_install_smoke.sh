#!/usr/bin/env bash
# CI's first step: a fresh install exactly as README.md says (its own `pip install .` line, into a new
# venv, no extras), then what README.md shows a new user running: `faithsieve doctor`, `localize` on the
# shipped example, `serve` answering one request, `score` on a small set and the RL grader's
# `compute_score`. A runtime import that pyproject.toml does not declare fails here, before any extra
# (test, browser, production) is installed.
#
#   .ci/fresh_install_smoke.sh            (from anywhere; the venv and outputs go to a temporary folder)
#   SMOKE_KEEP=1 .ci/fresh_install_smoke.sh   keeps that folder and says where it is
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=$(mktemp -d "${TMPDIR:-/tmp}/faithsieve-smoke.XXXXXX")
SERVER_PID=
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  if [ "${SMOKE_KEEP:-0}" = 1 ]; then echo "smoke: kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
step() { echo "smoke: $*" >&2; }
die() { echo "smoke: FAILED: $*" >&2; exit 1; }

# 1. the README's install line (the first line of its first bash block that creates a venv), run as it
#    stands with only the venv's place changed, so a README edit is what CI tests
INSTALL=$(awk '/^```bash/{inblock=1; next} /^```/{inblock=0} inblock && /python3 -m venv/{print; exit}' README.md)
[ -n "$INSTALL" ] || die "README.md has no 'python3 -m venv ... pip install' line in a bash block"
case "$INSTALL" in *"pip install ."*) ;; *) die "README.md's install line is not a plain 'pip install .': $INSTALL" ;; esac
case "$INSTALL" in *"["*) die "README.md's install line names an extra: $INSTALL" ;; esac
VENV="$WORK/venv"
step "install: ${INSTALL//.venv/$VENV}"
HAD_BUILD=0; [ -e build ] && HAD_BUILD=1
bash -c "set -e; ${INSTALL//.venv/$VENV}" > "$WORK/install.log" 2>&1 || { tail -20 "$WORK/install.log" >&2; die "install"; }
[ "$HAD_BUILD" = 1 ] || rm -rf build  # setuptools' in-tree build folder: stale files there would reach a later wheel
FS="$VENV/bin/faithsieve"
PY="$VENV/bin/python"
"$PY" - <<'EOF' || die "the fresh venv holds an extra's package"
import importlib.util, sys
extras = [m for m in ("pytest", "hypothesis", "schemathesis", "playwright", "gunicorn", "math_verify")
          if importlib.util.find_spec(m) is not None]
sys.exit(f"installed without extras, yet found: {extras}" if extras else 0)
EOF

# 2. faithsieve doctor
step "faithsieve doctor"
"$FS" doctor > "$WORK/doctor.txt" 2>&1 || { cat "$WORK/doctor.txt" >&2; die "faithsieve doctor"; }
grep -q "\[ok\] *z3" "$WORK/doctor.txt" || { cat "$WORK/doctor.txt" >&2; die "doctor: z3 is not ok"; }

# 3. localize on the shipped example, as README.md shows it (its first verdict line)
EXAMPLE=datasets/examples/23_arith_tiles_product.json
step "faithsieve localize $EXAMPLE --format text"
"$FS" localize "$EXAMPLE" --format text > "$WORK/localize.txt" 2>&1 || { cat "$WORK/localize.txt" >&2; die "localize"; }
WANT=$(grep -m1 '^VERDICT:' README.md)
[ "$(head -1 "$WORK/localize.txt")" = "$WANT" ] || { cat "$WORK/localize.txt" >&2; die "localize: first line is not README's '$WANT'"; }

# 4. serve, and one request
PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
step "faithsieve serve --port $PORT, one POST /localize"
"$FS" serve --host 127.0.0.1 --port "$PORT" > "$WORK/serve.log" 2>&1 &
SERVER_PID=$!
"$PY" - "$PORT" "$ROOT/$EXAMPLE" <<'EOF' || { tail -20 "$WORK/serve.log" >&2; die "serve"; }
import json, sys, time, urllib.error, urllib.request
port, example = sys.argv[1], sys.argv[2]
base = f"http://127.0.0.1:{port}"
for _ in range(240):
    try:
        urllib.request.urlopen(base + "/healthz", timeout=2).read()
        break
    except (urllib.error.URLError, OSError):
        time.sleep(0.5)
else:
    sys.exit("the server did not answer /healthz within 120 s")
body = open(example, "rb").read()
req = urllib.request.Request(base + "/localize", data=body, headers={"content-type": "application/json"})
answer = json.load(urllib.request.urlopen(req, timeout=60))
if answer.get("verdict") != "error" or answer.get("first_error_step") != 1:
    sys.exit(f"unexpected answer: {json.dumps(answer)[:300]}")
EOF
kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=

# 5. score on a small set (README's first measured row: the 50 shipped examples)
step "faithsieve score datasets/examples"
"$FS" score datasets/examples --out "$WORK/score" --no-progress > "$WORK/score.json" 2> "$WORK/score.log" \
  || { cat "$WORK/score.log" >&2; die "score"; }
[ -s "$WORK/score/report.md" ] && [ -s "$WORK/score/metrics.json" ] || die "score wrote no report.md/metrics.json"

# 6. the RL grader, imported as README.md shows it, from outside the source tree
step "from faithsieve.grader import compute_score"
(cd "$WORK" && "$PY" - <<'EOF') || die "grade"
from faithsieve.grader import compute_score

right = compute_score("gsm8k", "Janet sells 16 - 3 - 4 = 9 eggs.\nShe makes 9 * 2 = $18.\n#### 18", "18")
wrong = compute_score("gsm8k", "Janet sells 16 - 3 - 4 = 8 eggs.\nShe makes 8 * 2 = $16.\n#### 16", "18")
score = lambda r: r["score"] if isinstance(r, dict) else r
assert score(right) > score(wrong), (right, wrong)
EOF
step "ok: a fresh install runs what README.md shows"
