#!/usr/bin/env bash
# The main job (README "Run the demo"): installs what it needs, starts the embedded rack-labelled
# cluster, and runs `kafka-placement demo` on it. Extra args go to the demo.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/bootstrap.sh
export PATH="$root/.venv/bin:$PATH"
bash scripts/ensure-engine.sh
KAFKA_IMAGE=$(bash scripts/ensure-image.sh | tail -n 1)
export KAFKA_IMAGE TESTCONTAINERS_RYUK_DISABLED=true
exec kafka-placement demo "$@"
