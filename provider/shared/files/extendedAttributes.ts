// Whether a file carries attributes that a new file put in its place would not have: POSIX ACLs, an
// SELinux context (/etc/hosts has its own on SELinux systems), `user.*` attributes. Node.js cannot read
// extended attributes, so the standard tools are asked, once per file per process: getfattr (Debian's
// `attr` package) lists every attribute; without it, GNU ls marks a file with an ACL ("+") or a
// security context ("."), which covers all but `user.*` attributes. Linux only: elsewhere no file is
// treated as carrying any.

import { spawnSync } from "node:child_process";

const known = new Map<string, boolean>();

/** Whether `path` (a real path) has extended attributes or an ACL; false when nothing can tell. */
export function hasExtendedAttributes(path: string): boolean {
    if (process.platform !== "linux") return false;
    let answer = known.get(path);
    if (answer === undefined) {
        answer = askGetfattr(path) ?? askLs(path) ?? false;
        known.set(path, answer);
    }
    return answer;
}

function askGetfattr(path: string): boolean | undefined {
    const result = spawnSync("getfattr", ["--absolute-names", "--dump", "--match=-", "--", path], {
        encoding: "utf8",
        env: { ...process.env, LC_ALL: "C" },
    });
    if (result.error || result.status !== 0) return undefined;
    return /^[a-z]+\.[^=\n]+(=|$)/m.test(result.stdout);
}

function askLs(path: string): boolean | undefined {
    const result = spawnSync("ls", ["-ld", "--", path], { encoding: "utf8", env: { ...process.env, LC_ALL: "C" } });
    if (result.error || result.status !== 0) return undefined;
    const marker = result.stdout.charAt(10);
    return marker === "+" || marker === ".";
}
