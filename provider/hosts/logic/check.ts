// Pure validation and normalization of HostEntry inputs (the provider's `check`). Anything that could
// break a hosts file (whitespace or "#" in an address or name, a line break or control character in a
// comment or path) is refused here, so no later step ever writes unvalidated input.

import type * as dynamic from "@pulumi/pulumi/dynamic";
import { describeCharacter, describeInput, INVISIBLE, quote } from "../../shared/text";
import { unexpectedInputs } from "../../shared/unexpectedInputs";
import { isUnknown } from "../../shared/unknown";
import {
    HOST_ENTRY_INPUT_KEYS,
    HOST_ENTRY_STATE_KEYS,
    type HostEntryInputs,
    MAX_OWNER_LENGTH,
} from "../hostEntrySchema";
import { addressFamily, canonicalAddress } from "./address";
import { checkConnection, REMOTE_DEFAULT_FILE } from "./connection";
import { foldCase, hostnameProblem } from "./hostname";

/** Normalized inputs (unknown values passed through untouched) and every failure found. */
export interface CheckOutcome {
    inputs: HostEntryInputs;
    failures: dynamic.CheckFailure[];
}

/**
 * Control characters, the Unicode line and paragraph separators some tools treat as line breaks, and
 * every character that shows nothing: format characters (bidi overrides, zero-width spaces and
 * joiners), the Hangul fillers, the combining grapheme joiner and variation selectors. Any of them can
 * make a line read as something else in an editor, or hide text in it.
 */
const LINE_BREAKING_OR_CONTROL = new RegExp(`[\\p{Cc}\\p{Cf}\\u2028\\u2029\\u0085]|${INVISIBLE.source}`, "u");

/**
 * Validates and normalizes raw HostEntry inputs. `defaultFile` supplies the hosts file when `file` is
 * absent (stack config, then HOSTS_FILE, then the OS file). Unknown values (preview) are not validated.
 */
export function checkHostEntry(news: Record<string, unknown>, defaultFile: () => string): CheckOutcome {
    const failures = unexpectedInputs("HostEntry", news, HOST_ENTRY_INPUT_KEYS, HOST_ENTRY_STATE_KEYS);
    const fail = (property: string, reason: string) => failures.push({ property, reason });

    const address = checkAddress(news.address, fail);
    const names = checkNames(news.names, fail);
    const comment = checkComment(news.comment, fail);
    const remote = checkConnection(news.connection, news.credentials, fail);
    const file = remote
        ? checkRemoteFile(news.file ?? REMOTE_DEFAULT_FILE, fail)
        : checkFile(news.file ?? defaultFile(), fail);
    const adopt = news.adopt ?? false;
    if (typeof adopt !== "boolean" && !isUnknown(adopt))
        fail("adopt", `must be true or false, not ${describeInput(adopt)}`);

    const inputs: HostEntryInputs = { address, names, file, adopt: adopt as boolean };
    if (comment !== undefined) inputs.comment = comment;
    if (remote) {
        inputs.connection = remote.connection;
        if (Object.keys(remote.credentials).length > 0) inputs.credentials = remote.credentials;
    }
    // Set by the resource class, not by users: passed on when it is what the class sets, dropped otherwise.
    const owner = news.__owner;
    if (typeof owner === "string" && owner.length <= MAX_OWNER_LENGTH && !LINE_BREAKING_OR_CONTROL.test(owner)) {
        inputs.__owner = owner;
    }
    return { inputs, failures };
}

function checkAddress(value: unknown, fail: (property: string, reason: string) => void): string {
    if (isUnknown(value)) return value as string;
    if (typeof value !== "string") {
        fail("address", `must be an IPv4 or IPv6 address string, not ${describeInput(value)}`);
        return "";
    }
    const whitespace = [...value].find((c) => /\s/u.test(c) || LINE_BREAKING_OR_CONTROL.test(c));
    if (whitespace !== undefined) {
        fail("address", `${quote(value)} contains ${describeCharacter(whitespace)}; write the address alone`);
        return value;
    }
    if (!addressFamily(value)) {
        fail("address", `${quote(value)} is not an IPv4 or IPv6 address; hostnames belong in "names"`);
        return value;
    }
    return canonicalAddress(value);
}

function checkNames(value: unknown, fail: (property: string, reason: string) => void): string[] {
    if (isUnknown(value)) return value as unknown as string[];
    if (!Array.isArray(value)) {
        fail("names", `must be a list of hostnames (canonical name first), not ${describeInput(value)}`);
        return [];
    }
    if (value.length === 0) {
        fail("names", "must hold at least one hostname; the first is the canonical name");
        return [];
    }
    const seen = new Map<string, number>();
    return value.map((name: unknown, index) => {
        const property = `names[${index}]`;
        if (isUnknown(name)) return name as string;
        if (typeof name !== "string") {
            fail(property, `must be a hostname string, not ${describeInput(name)}`);
            return "";
        }
        const problem = hostnameProblem(name);
        if (problem) {
            fail(property, problem);
            return name;
        }
        const lower = foldCase(name);
        const first = seen.get(lower);
        if (first !== undefined) {
            fail(property, `${quote(name)} repeats names[${first}] (hostnames are case-insensitive)`);
        } else {
            seen.set(lower, index);
        }
        return lower;
    });
}

function checkComment(value: unknown, fail: (property: string, reason: string) => void): string | undefined {
    if (value === undefined || value === null || isUnknown(value)) return (value ?? undefined) as string | undefined;
    if (typeof value !== "string") {
        fail("comment", `must be a string, not ${describeInput(value)}`);
        return undefined;
    }
    const bad = [...value].find((c) => LINE_BREAKING_OR_CONTROL.test(c));
    if (bad !== undefined) {
        fail("comment", `contains ${describeCharacter(bad)}; a comment must be a single line of printable text`);
        return undefined;
    }
    const trimmed = value.trim();
    return trimmed.length > 0 ? trimmed : undefined;
}

function checkFile(value: unknown, fail: (property: string, reason: string) => void): string {
    if (isUnknown(value)) return value as string;
    if (typeof value !== "string" || value.length === 0) {
        fail("file", `must be the path of a hosts file, not ${describeInput(value)}`);
        return "";
    }
    const bad = [...value].find((c) => LINE_BREAKING_OR_CONTROL.test(c));
    if (bad !== undefined) fail("file", `${quote(value)} contains ${describeCharacter(bad)}`);
    return value;
}

/** A file on another machine: an absolute POSIX path (SFTP would resolve a relative one against the login's home). */
function checkRemoteFile(value: unknown, fail: (property: string, reason: string) => void): string {
    const file = checkFile(value, fail);
    if (typeof file === "string" && !isUnknown(file) && file !== "" && !file.startsWith("/")) {
        fail(
            "file",
            `${quote(file)} is relative; a file on another machine needs an absolute path, such as "/etc/hosts"`,
        );
    }
    return file;
}
