// `pulumi-lifecycle hosts import`: prints a Pulumi program declaring the lines of a hosts file with
// `adopt: true` and `protect: true`, since the engine cannot import dynamic resources. Only arguments and I/O live here;
// which lines become declarations, and how they are written, is hosts/importer.ts.

import { readFile, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { parseArgs } from "node:util";
import { ConnectionSettingsError } from "../hosts/errors/connectionSettingsError";
import { HostsFileError } from "../hosts/errors/hostsFileError";
import { SshConnectionError } from "../hosts/errors/sshConnectionError";
import { SshHostKeyError } from "../hosts/errors/sshHostKeyError";
import { HOST_ENTRY_SHIM } from "../hosts/hostEntrySchema";
import type { HostsFileConnection } from "../hosts/io/lookup";
import { readHostsFile } from "../hosts/io/readHostsFile";
import { readRemoteHostsFile } from "../hosts/io/readRemoteHostsFile";
import { DEFAULT_SSH_USER, machineOf, parseMachine, REMOTE_DEFAULT_FILE } from "../hosts/logic/connection";
import { defaultHostsFile } from "../hosts/logic/defaultFile";
import type { HostsDocument } from "../hosts/logic/hostsDocument";
import { type ImportedConnection, planImport, renderImportProgram } from "../hosts/logic/importer";
import { addEntriesToState, type Deployment, type StateImport } from "../hosts/logic/importState";
import { codeOf } from "../shared/files/errno";
import { providerText } from "../shared/providerShim";
import { messageOf, quote, shellQuote } from "../shared/text";
import { CliError } from "./cliError";
import type { CliIo, Command } from "./command";
import { exportStack, projectName } from "./pulumiStack";
import { recordInStack, stackNameIn } from "./stackImport";

const USAGE = `Usage: pulumi-lifecycle hosts import [--file FILE] [--match REGEX] [--all] [--no-protect] [--omit-file]
                                   [--out FILE] [--stack STACK [--dry-run]]
                                   [--ssh [USER@]HOST[:PORT] --host-key KEY [--identity KEYFILE] [--sudo]]

Prints a TypeScript program with one hosts.HostEntry per line of a hosts file, each with
\`adopt: true\` and \`protect: true\`: the first \`pulumi up\` takes over the identical lines
without writing the file, and \`pulumi destroy\` cannot delete them until their protection is
removed. The program exports the entries' ids and line numbers. The operating system's own lines
(loopback, this machine's name, IPv6 multicast, broadcast) are left out unless --all is given.
Lines that are not imported are listed at the end as comments, with the reason. A one-line summary
goes to stderr.

Options:
  -f, --file FILE     the hosts file (default: $HOSTS_FILE, else the operating system's hosts file);
                      the program names it as given, and Pulumi resolves a relative path against
                      the program's directory (the project's, or that of Pulumi.yaml's main), so
                      run the command there
  -m, --match REGEX   import only lines whose address or one of whose names matches REGEX
                      (a JavaScript regular expression, matched case-insensitively)
      --all           import the operating system's own lines too
      --no-protect    declare the entries without \`protect: true\`
      --omit-file     leave \`file\` out of the declarations: stack config pulumi-lifecycle:hostsFile
                      (or HOSTS_FILE, or the OS file) then decides which file they manage
  -o, --out FILE      write the program to FILE (which must not exist) instead of stdout
  -s, --stack STACK   also record the entries in STACK's state, as a create would have (through
                      \`pulumi stack export\` and \`pulumi stack import\`; run it in the project's
                      directory, STACK being a stack of that project): the program's first
                      \`pulumi preview\` then shows no change. Refused when an entry is already managed
                      there, or the file changes meanwhile. A state it did not read is never
                      overwritten: a change made meanwhile is read again, a stack another Pulumi
                      operation holds is refused, and two imports into one stack take turns
      --dry-run       with --stack: print the program and what would be added to the state, change nothing
      --ssh [USER@]HOST[:PORT]
                      read the hosts file of that machine over SSH (default user root, port 22;
                      --file then defaults to /etc/hosts); the program declares its entries with a
                      \`connection\` to it. Not with --stack: the program's first \`pulumi up\` takes the
                      lines over without writing (adopt), and records the connection's secrets encrypted
      --host-key KEY  the machine's public host key (\`ssh-ed25519 AAAA...\`) or its SHA256 fingerprint;
                      required with --ssh (without it, the error shows the key the machine presented)
      --identity KEYFILE
                      the private key to log in with (default: the SSH agent); the program reads it
                      from the secret stack config \`sshPrivateKey\`
      --sudo          read (and let the program write) the file through \`sudo -n\` on the machine
  -h, --help          print this help
`;

/**
 * Advice for a file that cannot be read, worded for this command: HostsFileError's advice is about the
 * provider, which must also write the file.
 */
const READ_ADVICE: Record<string, string> = {
    EACCES: "permission denied. Run the command as a user who may read it (sudo), or pass another --file",
    EPERM: "permission denied. Run the command as a user who may read it (sudo), or pass another --file",
    EISDIR: "it is a directory. Pass the path of a hosts file with --file",
};

/** The `hosts import` subcommand. */
export const hostsImportCommand: Command = {
    path: ["hosts", "import"],
    summary: "print a Pulumi program that adopts the entries of a hosts file",
    run: runHostsImport,
};

async function runHostsImport(args: readonly string[], io: CliIo): Promise<number> {
    const options = parseOptions(args);
    if (options.help) {
        io.stdout(USAGE);
        return 0;
    }
    const remote = options.ssh === undefined ? undefined : await remoteSource(options);
    const file = options.file ?? (remote ? REMOTE_DEFAULT_FILE : defaultHostsFile(undefined, io.env));
    const match = options.match === undefined ? undefined : compilePattern(options.match);
    const read = () =>
        readHostsFile(file).catch((error: unknown) => {
            throw withReadAdvice(error);
        });
    const { doc, bytes } = remote ? { ...(await readRemote(remote.read, file)), bytes: undefined } : await read();
    const plan = planImport(doc, {
        file,
        ...(match ? { match } : {}),
        includeSystem: options.all,
        ...(remote ? (remote.machineName ? { hostname: remote.machineName } : {}) : { hostname: hostname() }),
    });
    const command = ["pulumi-lifecycle hosts import --file", shellQuote(file)];
    if (remote) command.push(...remote.flags);
    if (options.match !== undefined) command.push("--match", shellQuote(options.match));
    if (options.all) command.push("--all");
    if (!options.protect) command.push("--no-protect");
    if (options.omitFile) command.push("--omit-file");
    const program = renderImportProgram(plan, {
        file,
        command: command.join(" "),
        omitFile: options.omitFile,
        protect: options.protect,
        ...(remote ? { connection: remote.declared } : {}),
    });
    const summary =
        `imported ${count(plan.entries.length, "entry", "entries")} from ${remote ? `${remote.label}:` : ""}${file}, ` +
        `skipped ${count(plan.skipped.length, "line", "lines")}`;
    if (options.stack === undefined) {
        await emit(program, options.out, io);
        io.stderr(`${summary}\n`);
        return 0;
    }

    const place = { cwd: process.cwd(), env: io.env };
    const reference = options.stack;
    const project = await projectName(place.cwd);
    const stackName = stackNameIn(reference, project, place.cwd);
    const shim = providerText(HOST_ENTRY_SHIM);
    const compute = (deployment: Deployment) =>
        addEntriesToState(deployment, plan, {
            project,
            stack: stackName,
            serializedShim: shim,
            protect: options.protect,
        });
    const additions = ({ added }: StateImport) =>
        `${count(added.length, "resource", "resources")} to stack ${reference}` +
        `${options.protect ? ", protected" : ""}:\n` +
        added.map(({ urn, entry }) => `  ${urn} (line ${entry.lineNumber})\n`).join("");
    if (options.dryRun) {
        const result = compute((await exportStack(reference, place)).deployment);
        io.stdout(program);
        io.stderr(`dry run: ${summary}; would add ${additions(result)}Nothing was written.\n`);
        return 0;
    }
    // --out is created first, so an existing file is refused before the state is touched, and removed
    // again when the state is not changed; the program goes to stdout only once the state holds it.
    if (options.out !== undefined) await emit(program, options.out, io);
    let result: StateImport;
    try {
        result = await recordInStack({
            reference,
            project,
            stackName,
            place,
            compute,
            beforeImport: async () => {
                if (bytes === undefined || !(await read()).bytes.equals(bytes)) {
                    throw new CliError(
                        `${file} changed while it was being imported; nothing was imported. Run the command again.`,
                        1,
                    );
                }
            },
            report: (line) => io.stderr(`${line}\n`),
        });
    } catch (error) {
        if (options.out !== undefined) await rm(options.out, { force: true });
        throw error;
    }
    if (options.out === undefined) await emit(program, undefined, io);
    io.stderr(`${summary}; added ${additions(result)}\`pulumi preview\` with the program now shows no change.\n`);
    return 0;
}

/** Prints the program, or writes it to `out` (never over an existing file). */
async function emit(program: string, out: string | undefined, io: CliIo): Promise<void> {
    if (out === undefined) {
        io.stdout(program);
        return;
    }
    try {
        await writeFile(out, program, { flag: "wx" });
    } catch (error) {
        const exists = codeOf(error) === "EEXIST";
        throw new CliError(
            exists
                ? `--out ${out} exists; choose another file or remove it (nothing was imported).`
                : `cannot write --out ${out}: ${sentenceOf(error)}`,
            1,
        );
    }
}

interface ImportOptions {
    file?: string;
    ssh?: string;
    hostKey?: string;
    identity?: string;
    sudo: boolean;
    match?: string;
    out?: string;
    stack?: string;
    dryRun: boolean;
    help: boolean;
    all: boolean;
    protect: boolean;
    omitFile: boolean;
}

function parseOptions(args: readonly string[]): ImportOptions {
    let values: {
        file?: string | undefined;
        match?: string | undefined;
        out?: string | undefined;
        stack?: string | undefined;
        "dry-run"?: boolean | undefined;
        help?: boolean | undefined;
        all?: boolean | undefined;
        "no-protect"?: boolean | undefined;
        "omit-file"?: boolean | undefined;
        ssh?: string | undefined;
        "host-key"?: string | undefined;
        identity?: string | undefined;
        sudo?: boolean | undefined;
    };
    try {
        ({ values } = parseArgs({
            args: [...args],
            options: {
                file: { type: "string", short: "f" },
                match: { type: "string", short: "m" },
                out: { type: "string", short: "o" },
                stack: { type: "string", short: "s" },
                "dry-run": { type: "boolean" },
                help: { type: "boolean", short: "h" },
                all: { type: "boolean" },
                "no-protect": { type: "boolean" },
                "omit-file": { type: "boolean" },
                ssh: { type: "string" },
                "host-key": { type: "string" },
                identity: { type: "string" },
                sudo: { type: "boolean" },
            },
            strict: true,
            allowPositionals: false,
        }));
    } catch (error) {
        throw new CliError(`${sentenceOf(error)} Run \`pulumi-lifecycle hosts import --help\` for usage.`, 2);
    }
    if (values.file === "") throw new CliError("--file needs the path of a hosts file.", 2);
    if (values.stack === "") throw new CliError("--stack needs the name of a stack.", 2);
    if (values.out === "") throw new CliError("--out needs the path of the program to write.", 2);
    if (values["dry-run"] && values.stack === undefined) {
        throw new CliError("--dry-run goes with --stack: without it, nothing but the program is written.", 2);
    }
    if (values.stack !== undefined && values["omit-file"]) {
        throw new CliError(
            "--stack records the file each entry names, and --omit-file names none: use one or the other.",
            2,
        );
    }
    if (values.ssh === undefined && (values["host-key"] ?? values.identity ?? values.sudo) !== undefined) {
        throw new CliError("--host-key, --identity and --sudo go with --ssh [USER@]HOST[:PORT].", 2);
    }
    if (values.ssh !== undefined && values.stack !== undefined) {
        throw new CliError(
            "--stack cannot record entries of another machine (their connection's secrets must be stored encrypted): " +
                "run the program's first `pulumi up` instead; with `adopt: true` it takes the lines over without writing them.",
            2,
        );
    }
    return {
        help: values.help ?? false,
        sudo: values.sudo ?? false,
        ...(values.ssh !== undefined ? { ssh: values.ssh } : {}),
        ...(values["host-key"] !== undefined ? { hostKey: values["host-key"] } : {}),
        ...(values.identity !== undefined ? { identity: values.identity } : {}),
        dryRun: values["dry-run"] ?? false,
        ...(values.out !== undefined ? { out: values.out } : {}),
        ...(values.stack !== undefined ? { stack: values.stack } : {}),
        all: values.all ?? false,
        protect: !(values["no-protect"] ?? false),
        omitFile: values["omit-file"] ?? false,
        ...(values.file !== undefined ? { file: values.file } : {}),
        ...(values.match !== undefined ? { match: values.match } : {}),
    };
}

/** The machine of `--ssh`, checked as a HostEntry's connection is, and how the program will reach it. */
async function remoteSource(options: ImportOptions): Promise<{
    read: HostsFileConnection;
    declared: ImportedConnection;
    label: string;
    flags: string[];
    machineName?: string;
}> {
    const target = /^(?:([^@]+)@)?(.+)$/.exec(options.ssh ?? "");
    const [, user, hostPort = ""] = target ?? [];
    const machine =
        parseMachine(hostPort) ??
        (/^[^:[\]]+$|^\[[^\]]+\]$/.test(hostPort) ? { host: hostPort.replace(/^\[|\]$/g, ""), port: 22 } : undefined);
    if (!machine) throw new CliError(`--ssh ${quote(options.ssh ?? "")} is not [USER@]HOST[:PORT].`, 2);
    if (options.hostKey === undefined) {
        throw new CliError(
            "--ssh needs --host-key: the machine's public host key (`ssh-keyscan -t ed25519 HOST`, checked against " +
                "`ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub` on the machine) or its SHA256 fingerprint.",
            2,
        );
    }
    let privateKey: string | undefined;
    if (options.identity !== undefined) {
        try {
            privateKey = await readFile(options.identity, "utf8");
        } catch (error) {
            throw new CliError(`cannot read --identity ${options.identity}: ${sentenceOf(error)}`, 1);
        }
    }
    const declared: ImportedConnection = {
        host: machine.host,
        port: machine.port,
        user: user ?? DEFAULT_SSH_USER,
        hostKey: options.hostKey,
        ...(options.sudo ? { privilege: "sudo" as const } : {}),
        ...(privateKey !== undefined ? { privateKeyConfig: "sshPrivateKey" } : {}),
    };
    const read: HostsFileConnection = {
        host: declared.host,
        port: declared.port,
        user: declared.user,
        hostKey: declared.hostKey,
        ...(options.sudo ? { privilege: "sudo" as const } : {}),
        ...(privateKey !== undefined ? { privateKey } : {}),
    };
    const flags = ["--ssh", shellQuote(options.ssh ?? ""), "--host-key", shellQuote(options.hostKey)];
    if (options.identity !== undefined) flags.push("--identity", shellQuote(options.identity));
    if (options.sudo) flags.push("--sudo");
    return { read, declared, label: `${declared.user}@${machineOf(declared)}`, flags };
}

/** Reads the machine's file, with the advice of a local read where it applies. */
async function readRemote(
    connection: HostsFileConnection,
    file: string,
): Promise<{ doc: HostsDocument; machineName?: string }> {
    try {
        return await readRemoteHostsFile(connection, file);
    } catch (error) {
        if (
            error instanceof ConnectionSettingsError ||
            error instanceof SshHostKeyError ||
            error instanceof SshConnectionError
        ) {
            throw new CliError(error.message, 1);
        }
        throw withReadAdvice(error);
    }
}

function withReadAdvice(error: unknown): unknown {
    if (!(error instanceof HostsFileError)) return error;
    const advice = READ_ADVICE[error.code];
    return advice ? new CliError(`cannot read hosts file ${error.file}: ${advice}.`, 1) : error;
}

/** Case-insensitive, because hostnames are. */
function compilePattern(source: string): RegExp {
    try {
        return new RegExp(source, "i");
    } catch (error) {
        throw new CliError(`--match ${quote(source)} is not a valid regular expression: ${sentenceOf(error)}`, 1);
    }
}

function count(n: number, one: string, many: string): string {
    return `${n} ${n === 1 ? one : many}`;
}

function sentenceOf(error: unknown): string {
    const message = messageOf(error);
    return /[.!?]$/.test(message) ? message : `${message}.`;
}
