#!/usr/bin/env bash
# The one test command (README "Run all tests"; .ci/run calls it).
# Installs everything it needs on a fresh machine, then runs lint, unit, conformance and
# integration tests against the live rack-labelled cluster. Extra args go to pytest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
started=$(date +%s)
step() { echo; echo "=== [$(( $(date +%s) - started ))s] $*"; }

step "Python environment"
bash scripts/bootstrap.sh
export PATH="$root/.venv/bin:$PATH"

step "Docker engine (loopback only, no bridge)"
bash scripts/ensure-engine.sh

step "Kafka image"
KAFKA_IMAGE=$(bash scripts/ensure-image.sh | tail -n 1)
export KAFKA_IMAGE
echo "KAFKA_IMAGE=$KAFKA_IMAGE"

step "Toxiproxy server (Go module proxy; the proxied cluster's fault proxy)"
bash scripts/ensure-toxiproxy.sh

step "Java reference classes (Maven Central)"
bash scripts/fetch-java-reference.sh

step "Lint: ruff check, ruff format --check (the whole tree), mypy"
ruff check plugin unit_tests integration_tests benchmarks
ruff format --check .
mypy

step "Wheels: sdist, manylinux and pure wheels, each installed into a fresh venv without a compiler"
bash scripts/build-wheels.sh
bash scripts/smoke-wheels.sh

step "Lowest supported versions (scripts/lowest-versions.txt): unit tests in .venv-lowest"
bash scripts/test-lowest.sh

step "pytest (unit, conformance, integration)"
export TESTCONTAINERS_RYUK_DISABLED=true
# the 40 slowest tests, so that a run that takes longer says where the time went
pytest -p no:cacheprovider --kafka-unavailable=fail --kafka-sigterm-cleanup --durations=40 "$@"

step "done in $(( $(date +%s) - started ))s"
