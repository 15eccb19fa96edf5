#!/usr/bin/env bash
# The system packages the sshd fleet suites need (test/support/sshFleet.ts starts real OpenSSH servers):
# Debian's openssh-server (sshd, sftp-server, ssh-keygen) and sudo (the privilege step the remote hosts
# files are written through). Installs only what is missing, only as root with apt-get; otherwise it says
# what is missing and exits 0, and those suites skip saying so (in CI they fail instead). Prints one line.
#
#   bash test/tools/sshd/install.sh
set -euo pipefail

# openssh-server depends on openssh-client (ssh-keygen) and openssh-sftp-server (sftp-server).
has_sftp_server() {
    local path
    for path in /usr/lib/openssh/sftp-server /usr/libexec/openssh/sftp-server /usr/libexec/sftp-server; do
        [[ -x "$path" ]] && return 0
    done
    return 1
}
missing=()
if [[ ! -x /usr/sbin/sshd ]] || ! command -v ssh-keygen >/dev/null 2>&1 || ! has_sftp_server; then
    missing+=(openssh-server)
fi
command -v sudo >/dev/null 2>&1 || missing+=(sudo)

if ((${#missing[@]} == 0)); then
    echo "sshd fleet: openssh-server and sudo already installed"
    exit 0
fi
if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    echo "sshd fleet: missing ${missing[*]}, and not root with apt-get to install them: the sshd fleet suites will skip, saying so"
    exit 0
fi

# Installing openssh-server would start the system's own sshd on port 22 where no init system stops it;
# the fleet starts its own servers. A policy-rc.d answering 101 ("action forbidden") is Debian's way to
# keep maintainer scripts from starting services; an existing one is left as it is.
policy=/usr/sbin/policy-rc.d
own_policy=""
if [[ ! -e "$policy" ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 0755 "$policy"
    own_policy=1
fi
log="$(mktemp)"
cleanup() {
    [[ -n "$own_policy" ]] && rm -f "$policy"
    rm -f "$log"
}
trap cleanup EXIT
if { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    echo "sshd fleet: installed ${missing[*]} ($(/usr/sbin/sshd -V 2>&1 | head -n 1))"
else
    cat "$log" >&2
    echo "sshd fleet: could not install ${missing[*]} (apt-get output above): the sshd fleet suites will skip, saying so"
fi
