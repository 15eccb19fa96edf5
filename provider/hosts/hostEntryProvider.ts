// The HostEntry resource provider: thin glue between the engine's operations and the pure entry logic.
//
//   check  -> checkHostEntry: validate and normalize (no I/O)
//   diff   -> diffHostEntry: replace on file or identity, update the rest (resolves real paths only)
//   create -> createEntry in one coalesced, locked, atomic write; a name already on a line of the family
//             conflicts, unless `adopt` takes an identical line over, or the create journal shows that an
//             earlier create of this entry for this stack wrote exactly that line and never answered
//   read   -> readEntry: missing line -> no id, so refresh drops it from state, or a get fails; else the
//             line as it is now (drift shows in the next diff)
//   update -> updateEntry: rewrite the line in place
//   delete -> deleteEntry: remove the line only; already gone is success

import type * as dynamic from "@pulumi/pulumi/dynamic";
import { readConfig } from "../shared/config";
import { shownOnItsRow } from "../shared/errors/engineEcho";
import { LifecycleError } from "../shared/errors/lifecycleError";
import { driftedInputs, keepingVersion, readAnswer, stamped, stateVersionOf } from "../shared/stateShape";
import { isUnknown } from "../shared/unknown";
import { EntryNotFoundError } from "./errors/entryNotFoundError";
import type { CreateJournal } from "./io/createJournal";
import type { HostsFileStore } from "./io/hostsFileStore";
import { checkHostEntry } from "./logic/check";
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
import type { HostEntryInputs, HostEntryOutputs } from "./schema";

/** Implements `pulumi-nodejs:dynamic/hosts:HostEntry` on top of a HostsFileStore. */
export class HostEntryProvider implements dynamic.ResourceProvider<HostEntryInputs, HostEntryOutputs> {
    private configuredFile: string | undefined;

    constructor(
        private readonly store: HostsFileStore,
        private readonly journal: CreateJournal,
    ) {}

    async configure(request: dynamic.ConfigureRequest): Promise<void> {
        this.configuredFile = readConfig(request, HOSTS_FILE_CONFIG_KEY);
    }

    async check(_olds: HostEntryInputs, news: HostEntryInputs): Promise<dynamic.CheckResult<HostEntryInputs>> {
        const { inputs, failures } = checkHostEntry({ ...news }, () => defaultHostsFile(this.configuredFile));
        return { inputs, failures };
    }

    async diff(id: string, olds: HostEntryOutputs, news: HostEntryInputs): Promise<dynamic.DiffResult> {
        stateVersionOf(olds, `host entry ${id}`);
        await this.settle(olds.file, id);
        return diffHostEntry(id, olds, news, await this.sameFile(olds.file, news.file));
    }

    async create(inputs: HostEntryInputs): Promise<dynamic.CreateResult<HostEntryOutputs>> {
        const id = formatId(identityOf(inputs));
        const real = this.store.realPath(inputs.file);
        const owner = inputs.__owner;
        const line = await this.store.edit(inputs.file, (doc) => {
            const interruptedLine = owner === undefined ? undefined : this.journal.interruptedLine(real, id, owner);
            const created = createEntry(doc, inputs, { adopt: inputs.adopt, file: inputs.file, interruptedLine });
            if (created.resumed && this.journal.settle(real, id, interruptedLine)) this.journal.removeIfSettled(real);
            else if (!created.adopted && owner !== undefined) this.journal.stage(real, id, renderLine(inputs), owner);
            return () => doc.lineNumber(created.line);
        });
        return { id, outs: stamped(outputsOf(inputs, line)) };
    }

    /** Reads the entry's line as the file has it now; nothing when it is gone (a refresh drops it). */
    read(id: string, props?: Partial<HostEntryOutputs>): Promise<dynamic.ReadResult<HostEntryOutputs>> {
        return explained(() => this.readLine(id, props));
    }

    private async readLine(
        id: string,
        props: Partial<HostEntryOutputs> | undefined,
    ): Promise<dynamic.ReadResult<HostEntryOutputs>> {
        const identity = identityFromId(id);
        stateVersionOf(props, `host entry ${id}`);
        const file = props?.file ?? defaultHostsFile(this.configuredFile);
        if (props?.address !== undefined) await this.settle(file, id);
        const found = await this.store.read(file, (doc) => readEntry(doc, identity));
        if (!found) {
            // A refresh passes the stored outputs (with an address); a get passes only what the program gave.
            if (props?.address === undefined) throw new EntryNotFoundError(describeIdentity(identity), file);
            return {};
        }
        const state: HostEntryInputs = {
            address: found.address,
            names: [...found.names],
            file,
            adopt: props?.adopt ?? false,
        };
        if (found.comment !== undefined) state.comment = found.comment;
        // A hand edit also changes the entry's inputs, so it shows on its field in the next diff.
        const inputs = driftedInputs(state, props, ["address", "names", "comment", "file", "adopt"]);
        return readAnswer(id, keepingVersion(outputsOf(state, found.lineNumber), props), inputs);
    }

    async update(
        id: string,
        olds: HostEntryOutputs,
        news: HostEntryInputs,
    ): Promise<dynamic.UpdateResult<HostEntryOutputs>> {
        const identity = identityFromId(id);
        stateVersionOf(olds, `host entry ${id}`);
        await this.settle(news.file, id);
        const line = await this.store.edit(news.file, (doc) => {
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
            await this.settle(props.file, id);
            await this.store.edit(props.file, (doc) => {
                deleteEntry(doc, identity);
                return () => undefined;
            });
        });
    }

    /**
     * The stack holds the entry `id`: what the create journal recorded for it is settled, and the journal
     * removed (under the file's lock) once nothing in it is open. Never fails an operation.
     */
    private async settle(file: string | undefined, id: string): Promise<void> {
        if (file === undefined || isUnknown(file)) return;
        try {
            const real = this.store.realPath(file);
            if (!this.journal.settle(real, id)) return;
            await this.store.edit(file, () => {
                this.journal.removeIfSettled(real);
                return () => undefined;
            });
        } catch {
            // Settling only keeps the journal short; the operation itself goes on.
        }
    }

    private async sameFile(oldFile: string | undefined, newFile: string): Promise<boolean | "unknown"> {
        if (isUnknown(newFile) || oldFile === undefined) return "unknown";
        if (oldFile === newFile) return true;
        return this.store.realPath(oldFile) === this.store.realPath(newFile);
    }
}

/** Outputs are the checked inputs (without `__provider`, which the server adds) plus the line number. */
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

function outputsOf(inputs: HostEntryInputs, line: number): HostEntryOutputs {
    const outputs: HostEntryOutputs = {
        address: inputs.address,
        names: [...inputs.names],
        file: inputs.file,
        adopt: inputs.adopt,
        line,
    };
    if (inputs.comment !== undefined) outputs.comment = inputs.comment;
    return outputs;
}

function identityFromId(id: string): EntryIdentity {
    const identity = parseId(id);
    if (!identity) {
        throw new Error(
            `${JSON.stringify(id)} is not a HostEntry id: ids are "<family>/<canonical name>", ` +
                'for example "ipv4/web.internal" or "ipv6/web.internal"',
        );
    }
    return identity;
}
