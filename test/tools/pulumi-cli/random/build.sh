#!/usr/bin/env bash
# Builds the Pulumi random resource plugin from Go modules:
#   bash test/tools/pulumi-cli/random/build.sh OUTPUT   (run by ../build.sh, which decides where it goes)
# 1. ./gen writes schema.json (version stamped) and bridge-metadata.json into a temp dir, with the
#    upstream provider's docs taken from its module directory in the Go module cache;
# 2. `go build -overlay` maps them next to main.go, whose go:embed reads them. Nothing generated
#    lands in this tree.
set -euo pipefail

# The plugin version @pulumi/random 4.21.2 declares (its package.json "pulumi" field); pinned here once.
version=4.21.2
out=${1:?usage: build.sh OUTPUT}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CGO_ENABLED=0

cd "$here"
upstream_mod=github.com/terraform-providers/terraform-provider-random
go mod download "$upstream_mod"
upstream=$(go list -m -f '{{.Dir}}' "$upstream_mod")

go run -trimpath ./gen -version "$version" -upstream "$upstream" \
	-schema "$work/schema.json" -metadata "$work/bridge-metadata.json"

cat >"$work/overlay.json" <<JSON
{"Replace": {
  "$here/schema.json": "$work/schema.json",
  "$here/bridge-metadata.json": "$work/bridge-metadata.json"
}}
JSON
mkdir -p "$(dirname "$out")"
go build -trimpath -overlay "$work/overlay.json" -ldflags "-X main.Version=$version" -o "$out" .
"$out" -version
