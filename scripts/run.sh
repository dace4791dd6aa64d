#!/usr/bin/env bash
# Foreground supervisor for `make run`: migrations, then web + worker + beat.
# Ctrl-C (or any child dying) stops all of them, and the embedded Postgres if one was started.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
PORT="${PORT:-8000}"
export DJANGO_SETTINGS_MODULE="${DJANGO_SETTINGS_MODULE:-config.settings.local}"

$BIN/python manage.py migrate --noinput
# Provider secrets stored under an older key (before $ENGRAM_DATA_DIR/encryption.key existed,
# they were under DJANGO_SECRET_KEY's public default) move onto the current key.
$BIN/python manage.py rotate_provider_secrets

pids=()
cleanup() {
  trap - INT TERM EXIT
  echo "engram: stopping"
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -z "${DATABASE_URL:-}" ]; then $BIN/python manage.py embedded_postgres stop || true; fi
}
trap cleanup INT TERM EXIT

# Web processes and threads are sized from the cores (config/gunicorn.py; ENGRAM_WEB_WORKERS
# and ENGRAM_WEB_THREADS override).
PORT="$PORT" $BIN/gunicorn config.wsgi:application -c config/gunicorn.py &
pids+=($!)
# ENGRAM_WORKER_NICE lowers the worker's CPU priority beside the web tier: on a saturated
# machine requests then go first and vectors land later (docs/configuration.md, "Sizing the
# web tier", has the measured trade-off). 0, the default, gives them equal shares.
# Each worker process embeds on cores ÷ processes threads, as each web process does: more
# threads than cores wait on each other under load (docs/configuration.md, "Sizing the worker").
WORKER_PROCESSES="${ENGRAM_WORKER_CONCURRENCY:-2}"
WORKER_EMBEDDING_THREADS=$(( $(nproc) / WORKER_PROCESSES ))
ENGRAM_LOCAL_EMBEDDING_THREADS="${ENGRAM_LOCAL_EMBEDDING_THREADS:-$(( WORKER_EMBEDDING_THREADS > 0 ? WORKER_EMBEDDING_THREADS : 1 ))}" \
  nice -n "${ENGRAM_WORKER_NICE:-0}" \
  $BIN/celery -A config worker --loglevel INFO --concurrency "$WORKER_PROCESSES" &
pids+=($!)
$BIN/celery -A config beat --loglevel INFO &
pids+=($!)

echo "engram: serving on http://127.0.0.1:${PORT} (Ctrl-C stops everything)"
# Stop everything as soon as any one process exits.
wait -n "${pids[@]}"
