#!/usr/bin/env bash
# Install the Toxiproxy server (the TCP fault proxy of the proxied test cluster) into the project's venv:
# .venv/bin/toxiproxy-server, built by `go install` from the Go module proxy. Idempotent: a binary
# already built from the pinned module version is kept. Prints the binary's path on the last line.
#
# Env: TOXIPROXY_VERSION (default the pin below), GO (the go command; default `go` on PATH, else
# /usr/local/go/bin/go). The module needs Go >= 1.23 (its go.mod).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=${TOXIPROXY_VERSION:-v2.12.0}
module=github.com/Shopify/toxiproxy/v2
target="$root/.venv/bin/toxiproxy-server"
say() { echo "ensure-toxiproxy: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

[[ -d "$root/.venv/bin" ]] || die "no $root/.venv: run scripts/bootstrap.sh first"

go_cmd=${GO:-}
if [[ -z "$go_cmd" ]]; then
    go_cmd=$(command -v go || true)
    [[ -z "$go_cmd" && -x /usr/local/go/bin/go ]] && go_cmd=/usr/local/go/bin/go
fi
[[ -n "$go_cmd" ]] || die "no Go toolchain found (need Go >= 1.23 for $module $version)"

# `go version -m` names the module version a binary was built from: the idempotency check.
if [[ -x "$target" ]] && "$go_cmd" version -m "$target" 2>/dev/null \
        | grep -Eq "^[[:space:]]+mod[[:space:]]+$module[[:space:]]+$version([[:space:]]|$)"; then
    say "toxiproxy-server $version already installed"
    echo "$target"
    exit 0
fi

say "installing $module/cmd/server@$version with $("$go_cmd" version)"
gobin=$(mktemp -d)
trap 'rm -rf "$gobin"' EXIT
# The server reports Version over its HTTP API (GET /version); `go install` leaves it "git" unless set.
GOBIN="$gobin" GOFLAGS=-buildvcs=false "$go_cmd" install \
    -ldflags "-X $module.Version=${version#v}" "$module/cmd/server@$version"
install -m 0755 "$gobin/server" "$target"
say "installed $target"
echo "$target"
