// The keyed creates this user's provider processes sent and did not see end, so that a create whose
// process was killed is followed, never made a second time.
//
// A create with a createToken is sent with a key the API replays: sent again with the same body, it
// answers the first create's operation instead of making another resource. When the provider process
// is killed after sending it (SIGKILL, a crash, the CLI killed), the engine keeps nothing but a pending
// create, which the next `pulumi up` drops; if the program changed the body since, that `up` sends the
// key with the new body, which the API refuses as a key reused with another request (the IETF draft's
// 422) without saying whether the first create is still running. Taking the key as spent then would make
// a second resource once that first create ends, on an API that accepts two with one natural key.
//
// So before a keyed create is sent, its key and body are recorded here; once its outcome is known (it
// ended, or was refused before doing anything) the record is removed. A create that finds a record for
// its resource sends that request again first, follows it to its end, and only then writes the program's
// body. The body is sealed (AES-256-GCM) with a key derived from the createToken, which the stack's state
// holds, so these files reveal nothing the state does not. A delete's operation is recorded the same way
// (under the resource's API id where a create has its token), so that a refresh after a delete whose
// process was killed follows that operation to its end instead of reading a replica that lags behind
// it. The keys of a createToken's chain seen spent are recorded the same way (under the token marked as
// the chain's), so that a create or delete that cannot walk the chain within its deadline goes on from
// where the last one stopped. Records live in this user's private directory
// ($TMPDIR/pulumi-lifecycle-<uid>/sent-creates, mode 0700), one file per resource and API, read and
// written synchronously: a few hundred bytes, once before and once after a request.

import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { codeOf } from "../../shared/files/errno";
import { privateDirectory } from "../../shared/files/privateDirectory";
import type { RawAsyncInputs } from "../logic/asyncState";
import type { OperationHandle } from "../protocol/dialects/dialect";
import type { AsyncApi } from "./asyncApi";

/** What one resource's keyed creates are recorded under: its API, collection, natural key and createToken. */
export interface CreateScope {
    readonly apiUrl: string;
    readonly collection: string;
    readonly naturalKey: string;
    readonly createToken: string;
}

/** A create sent and not seen to its end: the key it went with and the body it carried. */
export interface SentCreate {
    readonly key: string;
    readonly body: Record<string, unknown>;
    /** What held the natural key when it was sent: someone else's until the create is seen to make it. [9877] */
    readonly heldBy?: string;
}

/** The record of the keyed creates sent and not seen to their end. */
export interface SentCreates {
    /** Records a create about to be sent; a failure to record is reported, and the create goes on. */
    sending(scope: CreateScope, create: SentCreate): Promise<void>;
    /** The create recorded for this resource by a process that never saw it end; undefined when none. */
    unended(scope: CreateScope): Promise<SentCreate | undefined>;
    /** Forgets the create recorded for this resource: its outcome is known. */
    ended(scope: CreateScope): Promise<void>;
}

/** The API, collection and natural key of `api`'s resource, which every scope of it starts with. */
function resourceOf(api: AsyncApi): Omit<CreateScope, "createToken"> {
    return { apiUrl: api.baseUrl, collection: api.spec.target.collectionPath, naturalKey: api.spec.key };
}

/** What a keyed create of this resource is recorded under, when it has a createToken. */
export function createScopeOf(api: AsyncApi, inputs: RawAsyncInputs): CreateScope | undefined {
    return inputs.createToken === undefined ? undefined : { ...resourceOf(api), createToken: inputs.createToken };
}

/** What a delete of the resource with API id `resourceId` is recorded under: the id where a create has its token. */
export function deleteScopeOf(api: AsyncApi, resourceId: string): CreateScope {
    return { ...resourceOf(api), createToken: `delete ${resourceId}` };
}

/**
 * What a delete records when it first looked for what a create that succeeded made (the clock's ms as the
 * key), under that create's operation: a delete whose timeout is shorter than the span of reads that rules
 * out a lag goes on from there instead of starting over.
 */
export function lookedScopeOf(api: AsyncApi, operationRef: string): CreateScope {
    return { ...resourceOf(api), createToken: `looked ${operationRef}` };
}

/**
 * A delete as a record holds it: its operation's handle (its ref as the key, its kind as the body), or,
 * before an answer gave one, none: sent, its outcome unknown.
 */
export function deleteRecord(handle: OperationHandle | undefined): SentCreate {
    return handle ? { key: handle.ref, body: { kind: handle.kind } } : { key: "", body: {} };
}

/** The operation a delete's record holds (deleteRecord); undefined when it was recorded before its answer. */
export function recordedDelete(record: SentCreate): OperationHandle | undefined {
    const { kind } = record.body;
    return typeof kind === "string" && record.key !== "" ? { kind, ref: record.key } : undefined;
}

/**
 * How far this resource's createToken chain is known to be spent: every key before generation `below`
 * (spent is for good: a key's operation ended, and what it made is gone). `absent`: the resource that
 * generation `below`'s operation made read as gone since `since` (the clock's ms), but not for long
 * enough to rule out a read that lags.
 */
export interface SpentKeys {
    readonly below: number;
    readonly absent?: { readonly generation: number; readonly since: number };
}

/**
 * What the spent keys of a keyed create are recorded under: the resource's scope, its token marked as the
 * chain's (or, without a token, the one key its create was sent with), so that a create that cannot walk
 * the whole chain within its deadline (a delete of a pending create with a short timeouts.delete) goes on
 * from where the last one stopped instead of starting over.
 */
export function spentScopeOf(api: AsyncApi, inputs: RawAsyncInputs, sentKey?: string): CreateScope | undefined {
    if (inputs.createToken !== undefined) return { ...resourceOf(api), createToken: `spent ${inputs.createToken}` };
    return sentKey === undefined ? undefined : { ...resourceOf(api), createToken: `spent key ${sentKey}` };
}

/** Spent keys as a record holds them: the first key not known spent as the key, the absence as the body. */
export function spentRecord(spent: SpentKeys): SentCreate {
    return { key: String(spent.below), body: spent.absent ? { ...spent.absent } : {} };
}

/** The spent keys a record holds (spentRecord); none when there is no record, or none that reads whole. */
export function recordedSpent(record: SentCreate | undefined): SpentKeys {
    const below = Number(record?.key);
    if (record === undefined || !Number.isSafeInteger(below) || below < 0) return { below: 0 };
    const { generation, since } = record.body;
    return typeof generation === "number" && typeof since === "number"
        ? { below, absent: { generation, since } }
        : { below };
}

/** The environment variable that moves the records elsewhere (tests give each run its own). */
export const SENT_CREATES_DIR_ENV = "PULUMI_LIFECYCLE_SENT_CREATES_DIR";

const FORMAT = 1;
const HKDF_INFO = "pulumi-lifecycle sent create v1";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The records as files in `directory` (by default in this user's private directory). */
export function sentCreatesIn(
    env: NodeJS.ProcessEnv,
    report: (message: string) => void,
    directory: () => string = () => env[SENT_CREATES_DIR_ENV] ?? join(privateDirectory(), "sent-creates"),
): SentCreates {
    const fileOf = (scope: CreateScope) => join(directory(), `${scopeDigest(scope).toString("hex")}.json`);
    const warn = (what: string, error: unknown) =>
        report(
            `could not ${what} the record of a create in flight (${codeOf(error) ?? String(error)}); going on without it`,
        );
    return {
        async sending(scope, create) {
            try {
                const file = fileOf(scope);
                mkdirSync(join(file, ".."), { recursive: true, mode: 0o700 });
                const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
                // Not flushed: the record serves a process that is killed, whose writes the kernel keeps; a
                // machine that loses power loses its $TMPDIR too, often, and a torn record reads as none.
                writeFileSync(temporary, JSON.stringify({ format: FORMAT, sealed: seal(scope, create) }), {
                    mode: 0o600,
                });
                renameSync(temporary, file);
            } catch (error) {
                warn("write", error);
            }
        },
        async unended(scope) {
            let text: string;
            try {
                text = readFileSync(fileOf(scope), "utf8");
            } catch (error) {
                if (codeOf(error) !== "ENOENT") warn("read", error);
                return undefined;
            }
            return unsealed(scope, text);
        },
        async ended(scope) {
            try {
                unlinkSync(fileOf(scope));
            } catch (error) {
                if (codeOf(error) !== "ENOENT") warn("remove", error);
            }
        },
    };
}

/** Records nowhere: for callers with no provider process to outlive. */
export const NO_SENT_CREATES: SentCreates = {
    sending: async () => undefined,
    unended: async () => undefined,
    ended: async () => undefined,
};

function scopeDigest(scope: CreateScope): Buffer {
    return createHash("sha256")
        .update(JSON.stringify([scope.apiUrl, scope.collection, scope.naturalKey, scope.createToken]))
        .digest();
}

function sealingKey(scope: CreateScope): Buffer {
    return Buffer.from(hkdfSync("sha256", scope.createToken, scopeDigest(scope), HKDF_INFO, 32));
}

function seal(scope: CreateScope, create: SentCreate): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", sealingKey(scope), iv);
    const sealed = Buffer.concat([cipher.update(JSON.stringify(create), "utf8"), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString("base64");
}

/** The create a record holds; undefined for a record that is not one of this resource's (or not whole). */
function unsealed(scope: CreateScope, text: string): SentCreate | undefined {
    try {
        const record = JSON.parse(text) as { format?: unknown; sealed?: unknown };
        if (record.format !== FORMAT || typeof record.sealed !== "string") return undefined;
        const bytes = Buffer.from(record.sealed, "base64");
        const decipher = createDecipheriv("aes-256-gcm", sealingKey(scope), bytes.subarray(0, IV_BYTES));
        decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
        const plain = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
        const create = JSON.parse(plain.toString("utf8")) as Partial<SentCreate>;
        if (typeof create.key !== "string" || typeof create.body !== "object" || create.body === null) return undefined;
        const heldBy = typeof create.heldBy === "string" ? { heldBy: create.heldBy } : {};
        return { key: create.key, body: create.body as Record<string, unknown>, ...heldBy };
    } catch {
        return undefined;
    }
}
