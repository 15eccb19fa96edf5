// The data file of a task API server. The data lives in memory; every change marks it dirty, and one
// writer replaces the file atomically (writeFileAtomicSync) with the latest state: changes made while a write
// is under way are carried by the next one, so a burst of requests costs a few writes, not one each. The
// server answers a request only after `flush()`, so whatever a client was told is on disk: a crash (even
// kill -9) loses nothing that was acknowledged, and never leaves a partial file.

import { accessSync, constants, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname } from "node:path";
import { writeFileAtomicSync } from "../shared/files/atomicWrite";
import { codeOf } from "../shared/files/errno";
import { realPathSync } from "../shared/files/realPath";
import { sweepTemporariesSync } from "../shared/files/temporaryFiles";
import type { DatastoreRecord } from "../tasks/protocol/wire";
import { DataFileError } from "./dataFileError";
import { DataFileUnwritableError } from "./dataFileUnwritableError";
import { upgradedRecord, type VersionOneRecord } from "./datastoreRecord";
import { emptyData, type IdempotencyRecord, type TaskApiData, type TaskRecord } from "./records";

/** Marks a data file as ours, so that a stray JSON file is never taken for one (and overwritten). */
const FORMAT = "pulumi-lifecycle/task-api";
/** 2: datastores as the real API shapes them (datastoreRecord.ts); 1 had `sizeInBytes` and a bare `clusterInfo`. */
const VERSION = 2;

/** The data file's JSON. */
interface DataFile {
    readonly format: typeof FORMAT;
    readonly version: typeof VERSION;
    readonly counters: { readonly datastoresCreated: number; readonly tasksCreated: number };
    readonly datastores: readonly DatastoreRecord[];
    readonly tasks: readonly TaskRecord[];
    readonly idempotencyKeys: readonly IdempotencyRecord[];
}

/** The data of a server and, when it has one, its data file. */
export class TaskApiStore {
    private revision = 0;
    private writtenRevision = 0;
    private writing: Promise<void> | undefined;
    private writeCount = 0;

    private constructor(
        /** The data; mutate it, then call `changed()`. */
        readonly data: TaskApiData,
        /** The data file's real path; undefined for a server that keeps its data in memory only. */
        readonly file: string | undefined,
    ) {}

    /**
     * Loads the data file (a missing file is an empty server) and removes temporary files a killed
     * server left beside it. Without a file, the data lives in memory only.
     */
    static async open(file: string | undefined): Promise<TaskApiStore> {
        if (file === undefined) return new TaskApiStore(emptyData(), undefined);
        const real = realPathSync(file);
        sweepTemporariesSync(real);
        const text = await readFile(real, "utf8").catch((error: unknown) => {
            if (codeOf(error) === "ENOENT") return undefined;
            throw error;
        });
        if (text === undefined) checkWritableDirectory(real);
        return new TaskApiStore(text === undefined ? emptyData() : parseDataFile(real, text), real);
    }

    /** Times the data file was written. */
    get writes(): number {
        return this.writeCount;
    }

    /** Records that the data changed; a write follows soon, carrying every change made until it starts. */
    changed(): void {
        this.revision++;
        if (this.file !== undefined) this.startWriting().catch(() => undefined);
    }

    /** Resolves once every change made so far is on disk; rejects when the write failed. */
    async flush(): Promise<void> {
        const target = this.revision;
        while (this.file !== undefined && this.writtenRevision < target) await this.startWriting();
    }

    private startWriting(): Promise<void> {
        this.writing ??= this.writeLoop().finally(() => {
            this.writing = undefined;
        });
        return this.writing;
    }

    private async writeLoop(): Promise<void> {
        // Let the changes of this turn of the event loop (one request's, or a batch's) join this write.
        await new Promise((done) => setImmediate(done));
        while (this.file !== undefined && this.writtenRevision < this.revision) {
            const revision = this.revision;
            writeFileAtomicSync(this.file, Buffer.from(serialize(this.data)));
            this.writtenRevision = revision;
            this.writeCount++;
        }
    }
}

/** A new data file is written on the first change: fail now, not then, if its directory cannot take it. */
function checkWritableDirectory(file: string): void {
    const directory = dirname(file);
    try {
        if (!statSync(directory).isDirectory())
            throw new DataFileUnwritableError(file, `${directory} is not a directory`);
        accessSync(directory, constants.W_OK);
    } catch (error) {
        if (error instanceof DataFileUnwritableError) throw error;
        const code = codeOf(error);
        const problem =
            code === "ENOENT"
                ? `its directory ${directory} does not exist`
                : code === "EACCES" || code === "EPERM"
                  ? `its directory ${directory} is not writable`
                  : `its directory ${directory} cannot be used (${code ?? String(error)})`;
        throw new DataFileUnwritableError(file, problem);
    }
}

function serialize(data: TaskApiData): string {
    const file: DataFile = {
        format: FORMAT,
        version: VERSION,
        counters: { ...data.counters },
        datastores: [...data.datastores.values()],
        tasks: [...data.tasks.values()],
        idempotencyKeys: [...data.idempotencyKeys.values()],
    };
    return `${JSON.stringify(file, null, 2)}\n`;
}

function parseDataFile(file: string, text: string): TaskApiData {
    let json: unknown;
    try {
        json = JSON.parse(text);
    } catch (error) {
        throw new DataFileError(file, `not JSON: ${error instanceof Error ? error.message : String(error)}`);
    }
    const candidate = json as Partial<DataFile> | null;
    if (typeof candidate !== "object" || candidate === null || candidate.format !== FORMAT) {
        throw new DataFileError(file, `no "format": "${FORMAT}" marker`);
    }
    const version = candidate.version as number | undefined;
    if (version !== VERSION && version !== 1) {
        throw new DataFileError(
            file,
            `version ${JSON.stringify(candidate.version)}; this server reads versions 1 and ${VERSION}`,
        );
    }
    const { tasks, idempotencyKeys, counters } = candidate;
    const datastores =
        version === 1 && Array.isArray(candidate.datastores)
            ? (candidate.datastores as unknown as VersionOneRecord[]).map(upgradedRecord)
            : candidate.datastores;
    if (!Array.isArray(datastores) || !Array.isArray(tasks) || !Array.isArray(idempotencyKeys) || !counters) {
        throw new DataFileError(file, "datastores, tasks, idempotencyKeys or counters is missing");
    }
    return {
        datastores: new Map(datastores.map((datastore) => [datastore.id, datastore])),
        tasks: new Map(tasks.map((task) => [task.id, task])),
        idempotencyKeys: new Map(idempotencyKeys.map((record) => [record.key, record])),
        counters: { datastoresCreated: counters.datastoresCreated, tasksCreated: counters.tasksCreated },
    };
}
