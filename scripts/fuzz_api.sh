#!/usr/bin/env bash
# `make fuzz`: schemathesis over the whole OpenAPI schema against a live server, once with an
# agent key and once with a user key. Fails on any 5xx, any response that breaks its schema and
# any status code the schema does not document. Then the flood cases (lab/faults/floods.py)
# against the server restarted with low bounds: one agent floods each kind of row, and each
# case prints what was refused and fails if another subject's or tenant's rows changed.
# Own data dir, own port, own processes.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
PORT="${FUZZ_PORT:-8765}"
MAX_EXAMPLES="${FUZZ_MAX_EXAMPLES:-30}"
MAX_TIME="${FUZZ_MAX_TIME:-90}"
export DJANGO_SETTINGS_MODULE=config.settings.local
export DJANGO_DEBUG=false
export ENGRAM_DATA_DIR="${ENGRAM_DATA_DIR:-$PWD/.data}/fuzz"
export ENGRAM_EMBEDDING_PROVIDER=fake
# Limits high enough that generated traffic reaches the handlers; 429 is documented anyway.
export ENGRAM_MEMORY_WRITE_RATE_LIMIT=1000000
export ENGRAM_RECALL_RATE_LIMIT=1000000
export ENGRAM_EMBEDDING_WRITE_RATE_LIMIT=1000000
export ENGRAM_WRITE_RATE_LIMIT=1000000
mkdir -p "$ENGRAM_DATA_DIR"

$BIN/python manage.py migrate --noinput -v 0
slug="fuzz-$(date +%s)"
$BIN/python manage.py create_tenant --slug "$slug" >/dev/null
agent_key=$($BIN/python manage.py create_api_key --tenant "$slug" --role agent --agent-id fuzz-agent | tail -1)
user_key=$($BIN/python manage.py create_api_key --tenant "$slug" --role user --name fuzz-user | tail -1)

server_pid=""
start_server() {
  # The production gunicorn settings (its request-line bound included), one small process.
  $BIN/gunicorn config.wsgi:application -c config/gunicorn.py --bind "127.0.0.1:${PORT}" \
    --workers 1 --threads 4 --access-logfile /dev/null \
    --log-level warning --error-logfile "$ENGRAM_DATA_DIR/gunicorn.log" &
  server_pid=$!
}
stop_server() {
  if [ -n "$server_pid" ]; then kill -TERM "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  server_pid=""
}
cleanup() {
  stop_server
  if [ -z "${DATABASE_URL:-}" ]; then $BIN/python manage.py embedded_postgres stop >/dev/null || true; fi
}
trap cleanup EXIT INT TERM

start_server

status=0
# Schemathesis frames its section lines as pytest frames its closing line ("=== 3 warnings in
# 90s ==="); they are unframed so no reader of this log takes them for a test run's result.
# One schemathesis worker: with two threads, hypothesis parses lambda sources concurrently and
# CPython 3.11's ast.parse is not thread-safe ("AST constructor recursion depth mismatch").
for key in "$agent_key" "$user_key"; do
  $BIN/schemathesis run "http://127.0.0.1:${PORT}/api/schema/" \
    --wait-for-schema 60 \
    -H "Authorization: Bearer ${key}" \
    --checks not_a_server_error,status_code_conformance,response_schema_conformance \
    --max-examples "$MAX_EXAMPLES" --max-time "$MAX_TIME" --seed 1 --workers 1 \
    --suppress-health-check all 2>&1 | sed -u -E 's/^=+ (.*[^=]) =+$/schemathesis: \1/; s/^(schemathesis: .*) in ([0-9.]+s)$/\1, \2/' || status=1
done

stop_server
# The bounds a few seconds of flood reach, for the server and the command alike.
flood_bounds=$($BIN/python manage.py shell -v 0 -c "from lab.faults.floods import FLOOD_CASE_BOUNDS as b; print(' '.join(f'{k}={v}' for k, v in b.items()))" | tail -1)
export $flood_bounds
start_server
$BIN/python - "$PORT" <<'EOF'
import socket, sys, time
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.5).close()
        break
    except OSError:
        time.sleep(0.2)
EOF
$BIN/python manage.py flood_cases --url "http://127.0.0.1:${PORT}" || status=1
exit $status
