#!/usr/bin/env bash
# The unit tests once more, against the lowest version every pin in pyproject.toml allows
# (scripts/lowest-versions.txt), in their own venv (.venv-lowest): the pins are tested, not guessed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
python=${PYTHON:-python3}
stamp=.venv-lowest/.installed-$(cat pyproject.toml scripts/lowest-versions.txt | sha256sum | cut -c1-16)
if [ ! -f "$stamp" ]; then
  rm -rf .venv-lowest
  "$python" -m venv .venv-lowest
  .venv-lowest/bin/python -m pip install -q -U 'pip>=25.1'
  .venv-lowest/bin/python -m pip install -q -c scripts/lowest-versions.txt '.[all]' --group test
  touch "$stamp"
fi
.venv-lowest/bin/python -m pip list 2>/dev/null | grep -iE '^(numpy|pyarrow|pandas|pyspark|confluent-kafka|kafka-python|aiokafka) '
# CI unset: the Java conformance suite runs its quick size here (its full size runs in the main venv);
# under CI hypothesis still draws CI's fixed examples (a red CI must mean the change, not the draw)
profile=()
if [ "${CI:-}" = "true" ]; then profile=(--hypothesis-profile=ci); fi
env -u CI .venv-lowest/bin/python -m pytest -q -p no:cacheprovider "${profile[@]}" unit_tests "$@"
