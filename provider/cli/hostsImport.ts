// `pulumi-lifecycle hosts import`: prints a Pulumi program declaring the lines of a hosts file with
// `adopt: true` and `protect: true`, since the engine cannot import dynamic resources. Only arguments and I/O live here;
// which lines become declarations, and how they are written, is hosts/importer.ts.

import { hostname } from "node:os";
import { parseArgs } from "node:util";
import { osHostsFile } from "../hosts/defaultFile";
import { HostsFileError } from "../hosts/hostsFileError";
import { planImport, renderImportProgram } from "../hosts/importer";
import { readHostsDocument } from "../hosts/readHostsFile";
import { quote, shellQuote } from "../shared/text";
import { CliError } from "./cliError";
import type { CliIo, Command } from "./command";

const USAGE = `Usage: pulumi-lifecycle hosts import [--file FILE] [--match REGEX] [--all] [--no-protect] [--omit-file]

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
                      the Pulumi project, so run the command there
  -m, --match REGEX   import only lines whose address or one of whose names matches REGEX
                      (a JavaScript regular expression, matched case-insensitively)
      --all           import the operating system's own lines too
      --no-protect    declare the entries without \`protect: true\`
      --omit-file     leave \`file\` out of the declarations: stack config pulumi-lifecycle:hostsFile
                      (or HOSTS_FILE, or the OS file) then decides which file they manage
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
    const file = options.file ?? (io.env.HOSTS_FILE || osHostsFile(io.env));
    const match = options.match === undefined ? undefined : compilePattern(options.match);
    const doc = await readHostsDocument(file).catch((error: unknown) => {
        throw withReadAdvice(error);
    });
    const plan = planImport(doc, {
        file,
        ...(match ? { match } : {}),
        includeSystem: options.all,
        hostname: hostname(),
    });
    const command = ["pulumi-lifecycle hosts import --file", shellQuote(file)];
    if (options.match !== undefined) command.push("--match", shellQuote(options.match));
    if (options.all) command.push("--all");
    if (!options.protect) command.push("--no-protect");
    if (options.omitFile) command.push("--omit-file");
    io.stdout(
        renderImportProgram(plan, {
            file,
            command: command.join(" "),
            omitFile: options.omitFile,
            protect: options.protect,
        }),
    );
    io.stderr(
        `imported ${count(plan.entries.length, "entry", "entries")} from ${file}, ` +
            `skipped ${count(plan.skipped.length, "line", "lines")}\n`,
    );
    return 0;
}

interface ImportOptions {
    file?: string;
    match?: string;
    help: boolean;
    all: boolean;
    protect: boolean;
    omitFile: boolean;
}

function parseOptions(args: readonly string[]): ImportOptions {
    let values: {
        file?: string | undefined;
        match?: string | undefined;
        help?: boolean | undefined;
        all?: boolean | undefined;
        "no-protect"?: boolean | undefined;
        "omit-file"?: boolean | undefined;
    };
    try {
        ({ values } = parseArgs({
            args: [...args],
            options: {
                file: { type: "string", short: "f" },
                match: { type: "string", short: "m" },
                help: { type: "boolean", short: "h" },
                all: { type: "boolean" },
                "no-protect": { type: "boolean" },
                "omit-file": { type: "boolean" },
            },
            strict: true,
            allowPositionals: false,
        }));
    } catch (error) {
        throw new CliError(`${messageOf(error)} Run \`pulumi-lifecycle hosts import --help\` for usage.`, 2);
    }
    if (values.file === "") throw new CliError("--file needs the path of a hosts file.", 2);
    return {
        help: values.help ?? false,
        all: values.all ?? false,
        protect: !(values["no-protect"] ?? false),
        omitFile: values["omit-file"] ?? false,
        ...(values.file !== undefined ? { file: values.file } : {}),
        ...(values.match !== undefined ? { match: values.match } : {}),
    };
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
        throw new CliError(`--match ${quote(source)} is not a valid regular expression: ${messageOf(error)}`, 1);
    }
}

function count(n: number, one: string, many: string): string {
    return `${n} ${n === 1 ? one : many}`;
}

function messageOf(error: unknown): string {
    const message = error instanceof Error ? error.message : String(error);
    return /[.!?]$/.test(message) ? message : `${message}.`;
}
