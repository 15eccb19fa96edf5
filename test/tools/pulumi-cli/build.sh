#!/usr/bin/env bash
# Makes the real Pulumi CLI available to this project's tests and `npm run up`, built from Go modules
# (the only way to get it on machines that reach package registries and nothing else).
#
#   bash test/tools/pulumi-cli/build.sh          build what is missing, then print the bin directory
#   bash test/tools/pulumi-cli/build.sh --where  print the bin directory and whether it is complete
#
# What is built, each from a wrapper module beside this script (ours: go.mod, go.sum, a small main):
#   cli/              the `pulumi` CLI itself (github.com/pulumi/pulumi/pkg/v3/cmd/pulumi)
#   language-nodejs/  a Node.js language host, needed by `pulumi up` on a program directory
#   random/           the `random` resource plugin that @pulumi/random declares
# plus a copy of the dynamic-provider launcher that ships inside @pulumi/pulumi.
#
# The version is pinned once, in cli/go.mod. Binaries go to a per-user cache outside the repository
# ($PULUMI_LIFECYCLE_CACHE, default ~/.cache/pulumi-lifecycle/pulumi-v<version>/bin); the Go module and
# build caches are Go's own (~/go/pkg/mod, ~/.cache/go-build). A binary is rebuilt only when its wrapper
# module changed. An existing `pulumi` on PATH always wins and nothing is built.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
# The version a wrapper's go.mod requires of a module: `require M vX` or a line `M vX` of a require block.
required() { sed -n "s#^\\(require\\)\\{0,1\\}[[:space:]]*$2 v\\([0-9][0-9.]*\\)\\([[:space:]].*\\)\\{0,1\\}\$#\\2#p" "$1" 2>/dev/null | head -1; }
VERSION="$(required "$HERE/cli/go.mod" github.com/pulumi/pulumi/pkg/v3)"
RANDOM_VERSION="$(sed -n 's/^version=//p' "$HERE/random/build.sh")"
CACHE="${PULUMI_LIFECYCLE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-lifecycle}"
BIN="$CACHE/pulumi-v$VERSION/bin"
LAUNCHER="$REPO/node_modules/@pulumi/pulumi/pulumi-resource-pulumi-nodejs"

started=$SECONDS
say() { printf '[pulumi-cli %4ss] %s\n' "$((SECONDS - started))" "$*" >&2; }

# Resource plugins live apart from PATH (see the install at the end).
PLUGINS="$CACHE/pulumi-v$VERSION/plugins"

# The fingerprint of a wrapper module (every file in it): a binary built from other sources is stale.
fingerprint() { find "$HERE/$1" -type f -print0 | sort -z | xargs -0 cat | sha256sum | cut -c1-16; }

# Where a binary goes: the random plugin to PLUGINS, the rest to BIN.
dir_of() { if [[ "$1" == pulumi-resource-* ]]; then echo "$PLUGINS"; else echo "$BIN"; fi; }

is_current() {
    local dir
    dir="$(dir_of "$2")"
    [[ -x "$dir/$2" && "$(cat "$dir/.$2.stamp" 2>/dev/null)" == "$(fingerprint "$1")" ]]
}

where() {
    local missing=()
    for tool in cli:pulumi language-nodejs:pulumi-language-nodejs random:pulumi-resource-random; do
        is_current "${tool%%:*}" "${tool#*:}" || missing+=("${tool#*:}")
    done
    echo "$BIN"
    if ((${#missing[@]})); then echo "missing or stale: ${missing[*]}" >&2; return 1; fi
}

# build <module dir> <binary> <package> <go build flags...>; package "script" runs <module dir>/build.sh.
build() {
    local module="$1" binary="$2" package="$3" out
    out="$(dir_of "$binary")"
    shift 3
    if is_current "$module" "$binary"; then
        say "$binary: up to date"
        return
    fi
    local t=$SECONDS
    say "$binary: downloading the modules it imports (cold: a few minutes)"
    # Only what the build imports: the go.mod graph also names modules no package uses, and the proxy
    # here does not serve all of those.
    # (A module built by its own script embeds generated files, so only its script can list it.)
    [[ "$package" == script ]] || (cd "$HERE/$module" && go list -mod=readonly -deps "$package" >/dev/null)
    say "$binary: modules ready in $((SECONDS - t)) s; building $package (cold: 5-25 minutes on 2 cores)"
    (while sleep 60; do say "$binary: still building"; done) &
    local ticker=$!
    local status=0
    if [[ "$package" == script ]]; then
        bash "$HERE/$module/build.sh" "$out/$binary.tmp" || status=$?
    else
        (cd "$HERE/$module" && CGO_ENABLED=0 go build -mod=readonly -trimpath "$@" -o "$out/$binary.tmp" "$package") ||
            status=$?
    fi
    # The ticker's `sleep` would hold the output open for up to a minute: stop it with its shell.
    {
        pkill -P "$ticker" || true
        kill "$ticker" || true
        wait "$ticker" || true
    } 2>/dev/null
    if ((status != 0)); then
        say "$binary: build FAILED (exit $status): see the go output above"
        exit "$status"
    fi
    mv -f "$out/$binary.tmp" "$out/$binary"
    fingerprint "$module" >"$out/.$binary.stamp"
    say "$binary: built in $((SECONDS - t)) s"
}

if [[ "${1:-}" == "--where" ]]; then
    where
    exit $?
fi

if command -v pulumi >/dev/null 2>&1; then
    say "using the pulumi on PATH: $(command -v pulumi) ($(pulumi version 2>/dev/null || echo 'version unknown'))"
    dirname "$(command -v pulumi)"
    exit 0
fi
if ! command -v go >/dev/null 2>&1; then
    say "no pulumi on PATH and no Go toolchain to build it: install Go (1.25+) or the Pulumi CLI"
    exit 127
fi

mkdir -p "$BIN" "$PLUGINS"
say "Pulumi CLI v$VERSION into $BIN ($(go version | cut -d' ' -f3), $(nproc) cores)"
build cli pulumi github.com/pulumi/pulumi/pkg/v3/cmd/pulumi \
    -tags osusergo,grpcnotrace -ldflags "-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$VERSION"
build language-nodejs pulumi-language-nodejs . \
    -ldflags "-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$VERSION"
build random pulumi-resource-random script

# Resource plugins are installed into the PULUMI_HOME the tests use (beside the binaries), not left on
# PATH: an ambient plugin makes every program that merely has @pulumi/random installed warn about it.
HOME_DIR="$CACHE/pulumi-v$VERSION/home"
if ! PULUMI_HOME="$HOME_DIR" "$BIN/pulumi" plugin ls 2>/dev/null | grep -q "^random  *resource  *$RANDOM_VERSION"; then
    say "installing plugin random $RANDOM_VERSION into $HOME_DIR"
    PULUMI_HOME="$HOME_DIR" PULUMI_SKIP_UPDATE_CHECK=true "$BIN/pulumi" plugin install resource random \
        "$RANDOM_VERSION" --file "$PLUGINS/pulumi-resource-random" --reinstall >&2
fi

# The dynamic-provider plugin is a launcher script inside @pulumi/pulumi; the CLI looks for it beside
# itself. Copied on every run so it follows the SDK the project has installed.
if [[ -f "$LAUNCHER" ]]; then
    install -m 0755 "$LAUNCHER" "$BIN/pulumi-resource-pulumi-nodejs"
else
    say "warning: $LAUNCHER is missing (run npm ci first): dynamic providers will not start"
fi
say "ready: $("$BIN/pulumi" version)"
echo "$BIN"
