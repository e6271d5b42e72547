#!/usr/bin/env bash
# Installs each built wheel (dist/, from scripts/build-wheels.sh) into a fresh venv with no C compiler
# reachable (CC=false) and checks it works there: the import, Java's murmur2 test vector
# (Utils.murmur2("21") == -973932308, Kafka's UtilsTest), a batch partition, the accelerator loaded in
# the manylinux wheel and absent from the pure one, and the CLI.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
check() {
  local wheel=$1 native=$2
  local env="$work/venv-$native"
  "$python" -m venv "$env"
  CC=false CXX=false "$env/bin/python" -m pip install -q --only-binary=:all: "$wheel"
  (cd "$work" && "$env/bin/python" - "$native" <<'PY'
import sys
from kafka_placement.partitioning import partition_key, partition_keys
from kafka_placement.partitioning.murmur2 import murmur2
from kafka_placement.partitioning.native import native_available

assert murmur2(b"21") == -973932308, murmur2(b"21")          # Kafka UtilsTest vector
assert partition_keys([b"21", b"a"], 12).tolist() == [partition_key(b"21", 12), partition_key(b"a", 12)]
want_native = sys.argv[1] == "native"
assert native_available() is want_native, (native_available(), want_native)
print("ok", "native" if want_native else "pure")
PY
  )
  "$env/bin/kafka-placement" --help >/dev/null
}
shopt -s nullglob
manylinux=("$root"/dist/*manylinux*.whl)
pure=("$root"/dist/*-py3-none-any.whl)
[ ${#manylinux[@]} -eq 1 ] && [ ${#pure[@]} -eq 1 ] || { echo "run scripts/build-wheels.sh first" >&2; exit 1; }
check "${manylinux[0]}" native
check "${pure[0]}" pure
