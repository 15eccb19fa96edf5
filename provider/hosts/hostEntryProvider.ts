// The HostEntry resource provider: thin glue between the engine's operations and the pure entry logic.
// An entry with a `connection` lives on another machine: the same operations, through that machine's
// file access (hosts/remote/), one SSH connection per machine and login.
//
// Each method states its contract, as the SDK's ResourceProvider does; the work is in logic/ (pure) and
// io/ (the store: coalesced, locked, atomic writes).

import type * as dynamic from "@pulumi/pulumi/dynamic";
import { readConfig } from "../shared/config";
import { shownOnItsRow } from "../shared/errors/engineEcho";
import { LifecycleError } from "../shared/errors/lifecycleError";
import { driftedInputs, keepingVersion, readAnswer, stamped, stateVersionOf } from "../shared/stateShape";
import { isUnknown } from "../shared/unknown";
import { EntryMachineError } from "./errors/entryMachineError";
import { EntryNotFoundError } from "./errors/entryNotFoundError";
import { HostEntryIdError } from "./errors/hostEntryIdError";
import { HOST_ENTRY_INPUT_KEYS, type HostEntryInputs, type HostEntryOutputs } from "./hostEntrySchema";
import type { CreateJournal } from "./io/createJournal";
import { type HostsFileAccess, type HostsFileLocation, journalKey, locationKey } from "./io/hostsFileAccess";
import type { HostsFileStore } from "./io/hostsFileStore";
import { checkHostEntry } from "./logic/check";
import { type HostConnection, type HostCredentials, machineOf, usableConnection } from "./logic/connection";
import { defaultHostsFile, HOSTS_FILE_CONFIG_KEY } from "./logic/defaultFile";
import { diffHostEntry } from "./logic/diff";
import {
    createEntry,
    deleteEntry,
    describeIdentity,
    type EntryIdentity,
    formatId,
    identityOf,
    parseId,
    readEntry,
    renderLine,
    updateEntry,
} from "./logic/entries";

/** The hosts files of another machine, reached with a connection (hosts/remote/); one per machine and login. */
export type RemoteFiles = (connection: HostConnection, credentials: HostCredentials) => HostsFileAccess;

/** Where an entry's line lives: the file, and the machine when it is not this one. */
interface EntryPlace {
    readonly file: string;
    readonly connection?: HostConnection | undefined;
    readonly credentials?: HostCredentials | undefined;
}

/** Implements `pulumi-nodejs:dynamic/hosts:HostEntry` on top of a HostsFileStore. */
export class HostEntryProvider implements dynamic.ResourceProvider<HostEntryInputs, HostEntryOutputs> {
    private configuredFile: string | undefined;
    /** The settles asked for in this turn of the event loop, by file (see `settleBatch`). */
    private readonly settling = new Map<string, { readonly ids: Set<string>; readonly done: Promise<void> }>();
    /**
     * The entries this process has settled, by file and id: the engine showed it holds them, so what was
     * recorded for them is settled, and a refresh's diff after its read need not look again.
     */
    private readonly settled = new Set<string>();
    /**
     * Files whose journal this process found with nothing open, by location, at the count of lines this
     * process had recorded then (`CreateJournal.recorded`): until it records another, there is nothing for
     * it to settle there. What another process records meanwhile is never for an entry this stack holds:
     * a stack runs one deployment at a time, and another stack's create of a name on a line of ours fails
     * before it records anything.
     */
    private readonly journalClear = new Map<string, number>();

    constructor(
        private readonly store: HostsFileStore,
        private readonly journal: CreateJournal,
        private readonly remoteFiles?: RemoteFiles,
    ) {}

    /** Takes the stack's `pulumi-lifecycle:hostsFile`, the file of entries that name none; it touches no file. */
    async configure(request: dynamic.ConfigureRequest): Promise<void> {
        this.configuredFile = readConfig(request, HOSTS_FILE_CONFIG_KEY);
    }

    /** Validates and normalizes the inputs without any I/O; every bad field is a failure naming it and what to write. */
    async check(_olds: HostEntryInputs, news: HostEntryInputs): Promise<dynamic.CheckResult<HostEntryInputs>> {
        const { inputs, failures } = checkHostEntry({ ...news }, () => defaultHostsFile(this.configuredFile));
        return { inputs, failures };
    }

    /** Says whether the entry is replaced (another file, machine or identity) or updated in place; it writes nothing. */
    async diff(id: string, olds: HostEntryOutputs, news: HostEntryInputs): Promise<dynamic.DiffResult> {
        stateVersionOf(olds, `host entry ${id}`);
        await this.settle(olds, id);
        return diffHostEntry(id, olds, news, await this.sameFile(olds, news));
    }

    /**
     * Adds the entry's line in one locked, atomic write; if this fails, the line was not written (a name
     * already on a line of the family conflicts, unless `adopt` takes an identical line over, or the line is
     * exactly the one an earlier create of this entry wrote: recorded in the create journal, or this write's
     * own undone attempt, copied back by a tool that rewrote the file meanwhile).
     */
    async create(inputs: HostEntryInputs): Promise<dynamic.CreateResult<HostEntryOutputs>> {
        const id = formatId(identityOf(inputs), inputs.connection && machineOf(inputs.connection));
        const place = this.locate(inputs);
        const real = await this.journalKeyOf(place);
        // This create records it anew: the next time the engine shows it holds the entry settles it.
        this.settled.delete(settledKey(locationKey(place), id));
        const owner = inputs.__owner;
        const rendered = renderLine(inputs);
        const line = await this.store.edit(place, (doc, attempt) => {
            const journaled = owner === undefined ? undefined : this.journal.interruptedLine(real, id, owner);
            // Or this batch's own earlier attempt, undone, that a tool rewriting the file copied meanwhile:
            // its record stays open, since this create's answer has not reached the engine either.
            const interruptedLine = journaled ?? (attempt.shownLines.has(rendered) ? rendered : undefined);
            const created = createEntry(doc, inputs, { adopt: inputs.adopt, file: inputs.file, interruptedLine });
            const takenOver = created.resumed && journaled !== undefined;
            if (takenOver && this.journal.settle(real, new Set([id]), journaled) === "all settled")
                this.journal.removeIfSettled(real);
            else if (!created.adopted && owner !== undefined) this.journal.stage(real, id, rendered, owner);
            return () => doc.lineNumber(created.line);
        });
        return { id, outs: stamped(outputsOf(inputs, line)) };
    }

    /** Reads the entry's line as the file has it now, drift included; nothing when it is gone (a refresh drops it). */
    read(id: string, props?: Partial<HostEntryOutputs>): Promise<dynamic.ReadResult<HostEntryOutputs>> {
        return explained(() => this.readLine(id, props));
    }

    private async readLine(
        id: string,
        props: Partial<HostEntryOutputs> | undefined,
    ): Promise<dynamic.ReadResult<HostEntryOutputs>> {
        const identity = identityFromId(id);
        stateVersionOf(props, `host entry ${id}`);
        // A refresh passes stored outputs, checked when they were written; a get passes the program's
        // `connection` as given, so it is checked here as create's is (defaults, validation).
        const remote = props?.address === undefined ? usableConnection(props?.connection, props?.credentials) : props;
        const machine = remote?.connection && machineOf(remote.connection);
        if (identity.machine !== machine) throw new EntryMachineError(id, identity.machine, machine);
        const file = props?.file ?? defaultHostsFile(this.configuredFile);
        const where: EntryPlace = { file, connection: remote?.connection, credentials: remote?.credentials };
        if (props?.address !== undefined) await this.settle(where, id);
        const place = this.locate(where);
        const found = await this.store.read(place, (doc) => readEntry(doc, identity));
        if (!found) {
            // A refresh passes the stored outputs (with an address); a get passes only what the program gave.
            if (props?.address === undefined) {
                throw new EntryNotFoundError(
                    describeIdentity(identity),
                    typeof place === "string" ? file : place.access.describe(file),
                );
            }
            return {};
        }
        const state: HostEntryInputs = {
            address: found.address,
            names: [...found.names],
            file,
            adopt: props?.adopt ?? false,
        };
        if (found.comment !== undefined) state.comment = found.comment;
        if (props?.connection !== undefined) state.connection = props.connection;
        if (props?.credentials !== undefined) state.credentials = props.credentials;
        // A hand edit also changes the entry's inputs, so it shows on its field in the next diff.
        const inputs = driftedInputs(state, props, HOST_ENTRY_INPUT_KEYS);
        return readAnswer(id, keepingVersion(outputsOf(state, found.lineNumber), props), inputs);
    }

    /** Rewrites the entry's line in place and nothing else; if this fails, the file holds the old line. */
    async update(
        id: string,
        olds: HostEntryOutputs,
        news: HostEntryInputs,
    ): Promise<dynamic.UpdateResult<HostEntryOutputs>> {
        const identity = identityFromId(id);
        stateVersionOf(olds, `host entry ${id}`);
        await this.settle(news, id);
        const line = await this.store.edit(this.locate(news), (doc) => {
            const updated = updateEntry(doc, identity, news, { file: news.file });
            return () => doc.lineNumber(updated.line);
        });
        return { outs: stamped(outputsOf(news, line)) };
    }

    /** Removes the entry's line and nothing else; a line already gone is success. If this fails, the entry stays in the stack. */
    delete(id: string, props: HostEntryOutputs): Promise<void> {
        return explained(async () => {
            const identity = identityFromId(id);
            stateVersionOf(props, `host entry ${id}`);
            await this.settle(props, id);
            await this.store.edit(this.locate(props), (doc) => {
                deleteEntry(doc, identity);
                return () => undefined;
            });
        });
    }

    /**
     * The stack holds the entry `id`: what the create journal recorded for it is settled, and the journal
     * removed (under the file's lock) once nothing in it is open. Never fails an operation.
     */
    private async settle(where: Partial<EntryPlace>, id: string): Promise<void> {
        const { file } = where;
        if (file === undefined || isUnknown(file) || isUnknown(where.connection)) return;
        try {
            const place = this.locate({ ...where, file });
            const key = locationKey(place);
            if (this.settled.has(settledKey(key, id)) || this.journalClear.get(key) === this.journal.recorded) return;
            let batch = this.settling.get(key);
            if (!batch) {
                const ids = new Set<string>();
                batch = { ids, done: this.settleBatch(key, place, ids) };
                this.settling.set(key, batch);
            }
            batch.ids.add(id);
            await batch.done;
            this.settled.add(settledKey(key, id));
        } catch {
            // Settling only keeps the journal short; the operation itself goes on.
        }
    }

    /**
     * Settles the ids asked for one file in one turn of the event loop together: one real path and one
     * read of the journal for all of them (a refresh asks twice per entry: its Read, then its Diff).
     */
    private async settleBatch(key: string, place: HostsFileLocation, ids: ReadonlySet<string>): Promise<void> {
        await new Promise((resolve) => setImmediate(resolve));
        this.settling.delete(key);
        const real = await this.journalKeyOf(place);
        // Remembered at once, in the turn of the read: a line this process records later changes `recorded`.
        const clear = () => this.journalClear.set(key, this.journal.recorded);
        const outcome = this.journal.settle(real, ids);
        if (outcome === "nothing recorded") clear();
        if (outcome !== "all settled") return;
        await this.store.edit(place, () => {
            if (this.journal.removeIfSettled(real)) clear();
            return () => undefined;
        });
    }

    private async sameFile(olds: Partial<EntryPlace>, news: EntryPlace): Promise<boolean | "unknown"> {
        if (isUnknown(news.file) || olds.file === undefined) return "unknown";
        if (olds.file === news.file) return true;
        // On another machine, two spellings of one file cost a replacement rather than a connection during diff.
        if (olds.connection || news.connection) return false;
        return (await this.store.realPath(olds.file)) === (await this.store.realPath(news.file));
    }

    /** The store's location of an entry's file: a local path, or the file on the machine of its connection. */
    private locate(place: EntryPlace): HostsFileLocation {
        if (!place.connection) return place.file;
        if (!this.remoteFiles) throw new Error("this provider was built without remote hosts files");
        return { file: place.file, access: this.remoteFiles(place.connection, place.credentials ?? {}) };
    }

    /** How the create journal names the file: its real path, on its machine. */
    private async journalKeyOf(location: HostsFileLocation): Promise<string> {
        const real = await this.store.realPath(location);
        return typeof location === "string" ? real : journalKey(location, real);
    }
}

/**
 * Runs a read or delete whose explained failures (LifecycleErrors: their message says what to do) the
 * engine shows once, on the entry's row, without the SDK's echo of them with stack frames under the
 * Stack row. A failure the package did not explain keeps its stack, for the bug report.
 */
async function explained<T>(work: () => Promise<T>): Promise<T> {
    try {
        return await work();
    } catch (error) {
        throw error instanceof LifecycleError ? shownOnItsRow(error) : error;
    }
}

/** Outputs are the checked inputs (without `__provider`, which the server adds) plus the line number. */
function outputsOf(inputs: HostEntryInputs, line: number): HostEntryOutputs {
    const outputs: HostEntryOutputs = {
        address: inputs.address,
        names: [...inputs.names],
        file: inputs.file,
        adopt: inputs.adopt,
        line,
    };
    if (inputs.comment !== undefined) outputs.comment = inputs.comment;
    if (inputs.connection !== undefined) outputs.connection = inputs.connection;
    if (inputs.credentials !== undefined) outputs.credentials = inputs.credentials;
    return outputs;
}

function identityFromId(id: string): EntryIdentity & { machine?: string } {
    const identity = parseId(id);
    if (!identity) throw new HostEntryIdError(id);
    return identity;
}

/** How `settled` names an entry of a file. */
function settledKey(location: string, id: string): string {
    return `${location}\n${id}`;
}
