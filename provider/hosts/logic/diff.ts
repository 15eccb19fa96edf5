// Pure diff of a HostEntry's stored outputs against its checked new inputs.

import { canonicalJson } from "../../shared/canonicalJson";
import type { ResourceDiff } from "../../shared/resourceDiff";
import { containsUnknown, isUnknown } from "../../shared/unknown";
import type { HostEntryInputs, HostEntryOutputs } from "../hostEntrySchema";
import { addressFamily } from "./address";
import { machineOf } from "./connection";
import { type EntryIdentity, parseId } from "./entries";

/**
 * Compares stored outputs (`olds`) with new inputs. The machine (`connection.host` and `port`), `file`
 * and the entry's identity (address family and canonical name) force a replacement; the rest of
 * `connection` (user, host key, credentials, privilege) updates in place, since the line stays; the address within its family, aliases, comment and adopt update
 * in place. `line` and `__provider` are never a change: a new package version is no change.
 *
 * Replacement runs create-before-delete (the engine's default, which keeps dependents) unless the new
 * line would collide with the old one: same file, same family and a name in common. Then the old line
 * must go first, so the diff asks for delete-before-replace. `sameFile` says whether the old and new
 * paths name the same real file ("unknown" during preview); unknown values count as the colliding case.
 */
export function diffHostEntry(
    id: string,
    olds: Partial<HostEntryOutputs>,
    news: HostEntryInputs,
    sameFile: boolean | "unknown",
): ResourceDiff {
    const old = parseId(id) ?? identityFromOutputs(olds);
    const replaces: string[] = [];
    const oldMachine = olds.connection ? machineOf(olds.connection) : undefined;
    const newMachine = news.connection ? machineOf(news.connection) : undefined;
    const machineUnknown =
        isUnknown(news.connection) ||
        (news.connection !== undefined && (isUnknown(news.connection.host) || isUnknown(news.connection.port)));
    const machineChanged = machineUnknown || oldMachine !== newMachine;
    if (machineChanged) replaces.push("connection");
    if (sameFile !== true && !machineChanged) replaces.push("file");
    if (isUnknown(news.address) || addressFamily(news.address) !== old?.family) replaces.push("address");
    // Only the canonical name is identity: an unknown alias is an in-place update, an unknown list may not be.
    if (isUnknown(news.names) || isUnknown(news.names[0]) || news.names[0] !== old?.name) replaces.push("names");

    const changed =
        replaces.length > 0 ||
        news.file !== olds.file ||
        news.address !== olds.address ||
        !sameList(news.names, olds.names) ||
        (news.comment ?? "") !== (olds.comment ?? "") ||
        news.adopt !== (olds.adopt ?? false) ||
        canonical(news.connection) !== canonical(olds.connection) ||
        canonical(news.credentials) !== canonical(olds.credentials);

    const newFamily = isUnknown(news.address) ? undefined : addressFamily(news.address);
    const wouldCollide =
        sameFile !== false &&
        !(machineChanged && !machineUnknown) &&
        (newFamily === undefined || newFamily === old?.family) &&
        (containsUnknown(news.names) || news.names.some((name) => olds.names?.includes(name)));
    return { changes: changed, replaces, deleteBeforeReplace: replaces.length > 0 && wouldCollide };
}

function identityFromOutputs(olds: Partial<HostEntryOutputs>): EntryIdentity | undefined {
    const family = olds.address ? addressFamily(olds.address) : undefined;
    const name = olds.names?.[0];
    return family && name ? { family, name } : undefined;
}

function sameList(a: readonly string[], b: readonly string[] | undefined): boolean {
    return b !== undefined && a.length === b.length && a.every((value, index) => value === b[index]);
}

function canonical(value: unknown): string {
    return value === undefined ? "" : canonicalJson(value);
}
