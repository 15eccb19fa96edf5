// Turns the lines of a hosts file into `hosts.HostEntry` declarations with `adopt: true`: the engine
// cannot import dynamic resources, so adoption on the first `pulumi up` is the way in. Pure: the caller
// reads the file and prints the program.
//
// A line becomes a declaration only when the provider will adopt it without writing: its values pass
// `check` unchanged, and `createEntry` will find it as the only line of its family carrying its names.
// The operating system's own lines (loopback, this machine's name, IPv6 multicast, broadcast) are left
// out unless asked for: managed, `pulumi destroy` would delete them. Every other address line is
// reported with the reason, so nothing is dropped silently. Declarations are protected by default, as
// `pulumi import` protects what it imports.

import { quote } from "../../shared/text";
import { type AddressFamily, addressFamily, FAMILY_LABEL } from "./address";
import { checkHostEntry } from "./check";
import { foldCase } from "./hostname";
import { type HostsDocument, type HostsLine, type ParsedEntry, resolverFields, toUtf8 } from "./hostsDocument";
import { lineMatches } from "./lineFilter";

/** The arguments of one generated declaration: exactly what `check` returns for them. */
export interface ImportedEntryArgs {
    /** Canonical address (RFC 5952 for IPv6), as the line has it. */
    address: string;
    /** The line's names in file order, lowercase. */
    names: string[];
    /** The line's comment, when it has one. */
    comment?: string;
    file: string;
    adopt: true;
}

/** One line of the file that becomes a `hosts.HostEntry` declaration. */
export interface ImportedEntry {
    /** The Pulumi resource name: the canonical name, with `-ipv6` for IPv6 lines; unique in the plan. */
    resourceName: string;
    /** The exported constant holding the resource: a camelCase identifier, unique in the plan. */
    variableName: string;
    /** 1-based line number in the file. */
    lineNumber: number;
    args: ImportedEntryArgs;
}

/** An address line that cannot be adopted, and why. */
export interface SkippedLine {
    /** 1-based line number in the file. */
    lineNumber: number;
    /** The line as written (UTF-8). */
    text: string;
    reason: string;
}

/** What `hosts import` turns a file into: declarations in file order, and the lines left out. */
export interface ImportPlan {
    entries: ImportedEntry[];
    skipped: SkippedLine[];
}

/** Settings of `planImport`. */
export interface PlanImportOptions {
    /** The hosts file, as the declarations should name it. */
    file: string;
    /** Keep only lines whose address or one of whose names this pattern matches. */
    match?: RegExp;
    /** Import the operating system's own lines too (`--all`). */
    includeSystem?: boolean;
    /** This machine's name (lines naming it are the system's); none when unknown. */
    hostname?: string;
}

/** Settings of `renderImportProgram`. */
export interface RenderImportOptions {
    /** The hosts file the plan was made from, named in the header. */
    file: string;
    /** The command that generated the program, named in the header so it can be run again. */
    command: string;
    /** Declare every entry with `protect: true` (default), so `pulumi destroy` cannot delete its line. */
    protect?: boolean;
    /**
     * Leave `file` out of the declarations, so the program's default decides which file they manage
     * (stack config `pulumi-lifecycle:hostsFile`, then HOSTS_FILE, then the OS file).
     */
    omitFile?: boolean;
    /** The machine the file was read from over SSH: every declaration gets this `connection`. */
    connection?: ImportedConnection;
}

/** The connection a generated program declares its entries with; the private key stays in stack config. */
export interface ImportedConnection {
    readonly host: string;
    readonly port: number;
    readonly user: string;
    readonly hostKey: string;
    readonly privilege?: "sudo";
    readonly sftpServer?: string;
    /** The stack config key (a secret) holding the private key; none when the SSH agent authenticates. */
    readonly privateKeyConfig?: string;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * Identifiers a generated constant may not take: reserved words (strict mode, where `eval` and
 * `arguments` cannot be bound either), globals that a module-level constant would shadow or that
 * TypeScript reserves in CommonJS output, and `hosts`, the namespace the program imports.
 */
const UNAVAILABLE_IDENTIFIERS = new Set([
    ...["break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do", "else"],
    ...["enum", "export", "extends", "false", "finally", "for", "function", "if", "import", "in", "instanceof"],
    ...["new", "null", "return", "super", "switch", "this", "throw", "true", "try", "typeof", "var", "void"],
    ...["while", "with", "yield", "let", "static", "implements", "interface", "package", "private"],
    ...["protected", "public", "await", "arguments", "eval", "undefined", "globalThis", "require", "module"],
    ...["exports", "global", "process", "console", "hosts", "pulumi", "connection"],
]);

/**
 * Plans the declarations for the address lines of `doc`. A line is skipped, with the reason, when its
 * values fail `check`, when another line of the same family carries one of its names (adopt would then
 * see two lines, so both are skipped), or when resolvers ignore it (no valid address, or no names).
 * Lines sharing names are found in the whole file, also among lines `match` leaves out.
 */
export function planImport(doc: HostsDocument, options: PlanImportOptions): ImportPlan {
    const pattern = options.match && new RegExp(options.match);
    const adoptable: { lineNumber: number; family: AddressFamily; args: ImportedEntryArgs }[] = [];
    const skipped: SkippedLine[] = [];
    for (const line of doc.allLines()) {
        if (pattern && !lineMatches(pattern, line)) continue;
        const lineNumber = doc.lineNumber(line);
        const text = toUtf8(line.text);
        if (!line.entry) {
            const reason = whyResolversIgnore(line);
            if (reason) skipped.push({ lineNumber, text, reason });
            continue;
        }
        const system = options.includeSystem ? undefined : systemLineReason(line.entry, options.hostname);
        if (system) {
            skipped.push({ lineNumber, text, reason: system });
            continue;
        }
        const reasons: string[] = [];
        const sharing = sharedNamesReason(doc, line, line.entry);
        if (sharing) reasons.push(sharing);
        const checked = checkLine(line.entry, options.file);
        if ("failures" in checked) reasons.push(...checked.failures);
        if (reasons.length === 0 && "args" in checked) {
            adoptable.push({ lineNumber, family: line.entry.family, args: checked.args });
        } else {
            skipped.push({ lineNumber, text, reason: reasons.join("; ") });
        }
    }
    const resourceNames = new Set<string>();
    const variableNames = new Set<string>();
    const entries = adoptable.map(({ lineNumber, family, args }): ImportedEntry => {
        const canonical = args.names[0] as string;
        const resourceName = unique(family === "ipv4" ? canonical : `${canonical}-ipv6`, resourceNames, "-");
        const variableName = unique(identifierFor(resourceName), variableNames, "");
        return { resourceName, variableName, lineNumber, args };
    });
    return { entries, skipped };
}

/**
 * Renders a plan as a TypeScript program to paste into a Pulumi project: one exported
 * `hosts.HostEntry` per entry, then a comment for each skipped line. Every value is a JSON string
 * literal with invisible and line-breaking characters escaped, and text in comments is escaped the same
 * way, so nothing from the file can end a literal or a comment. Throws when a variable name of a
 * hand-made plan is not a plain identifier, since it is the one thing not written as a literal.
 */
export function renderImportProgram(plan: ImportPlan, options: RenderImportOptions): string {
    const protect = options.protect ?? true;
    const out = [
        `// Generated by \`${commentText(options.command)}\` from ${commentText(options.file)}.`,
        "//",
        "// Every entry has `adopt: true`: the first `pulumi up` takes over the identical line already in the",
        "// file without writing to it. From then on Pulumi manages the line: changing a declaration rewrites it,",
        "// and removing a declaration (or `pulumi destroy`) deletes its line from the file.",
        ...(protect
            ? [
                  "//",
                  "// Every entry is protected, as `pulumi import` protects what it imports: `pulumi destroy`, or removing",
                  "// a declaration, fails instead of deleting the line. To let Pulumi delete a line, remove its",
                  "// `protect: true` and run `pulumi up` first.",
              ]
            : []),
        ...(options.omitFile
            ? [
                  "//",
                  "// The declarations name no file: set stack config `pulumi-lifecycle:hostsFile` (or HOSTS_FILE) to it,",
                  "// or they manage the operating system's hosts file.",
              ]
            : []),
        "",
    ];
    if (plan.entries.length > 0) {
        const remote = options.connection;
        out.push(...(remote?.privateKeyConfig ? ['import * as pulumi from "@pulumi/pulumi";'] : []));
        out.push('import { hosts } from "pulumi-lifecycle";', "");
        if (remote) out.push(...renderConnection(remote), "");
        for (const entry of plan.entries) {
            out.push(...renderEntry(entry, options.omitFile ?? false, protect, remote !== undefined), "");
        }
        out.push(
            "// The stack's outputs: each entry's id and line number (`pulumi stack output ids`).",
            "export const ids = {",
            ...plan.entries.map((e) => `    ${e.variableName}: ${e.variableName}.id,`),
            "};",
            "export const lines = {",
            ...plan.entries.map((e) => `    ${e.variableName}: ${e.variableName}.line,`),
            "};",
            "",
        );
    } else {
        out.push("// No line of the file could be imported.", "export {};", "");
    }
    for (const line of plan.skipped) {
        out.push(
            `// Not imported: line ${line.lineNumber} ${commentText(literal(line.text))}: ${commentText(line.reason)}`,
        );
    }
    while (out[out.length - 1] === "") out.pop();
    return `${out.join("\n")}\n`;
}

/** The shared `connection` constant: the machine, its pinned key, and where the private key comes from. */
function renderConnection(connection: ImportedConnection): string[] {
    const key = connection.privateKeyConfig;
    return [
        key
            ? `// The machine, over SSH. Its private key is a secret of the stack: \`pulumi config set --secret ${commentText(key)} < KEYFILE\`.`
            : "// The machine, over SSH, authenticated by the SSH agent (SSH_AUTH_SOCK).",
        "const connection = {",
        `    host: ${literal(connection.host)},`,
        `    port: ${connection.port},`,
        `    user: ${literal(connection.user)},`,
        `    hostKey: ${literal(connection.hostKey)},`,
        ...(connection.privilege ? [`    privilege: ${literal(connection.privilege)} as const,`] : []),
        ...(connection.sftpServer ? [`    sftpServer: ${literal(connection.sftpServer)},`] : []),
        ...(key ? [`    privateKey: new pulumi.Config().requireSecret(${literal(key)}),`] : []),
        "};",
    ];
}

function renderEntry(entry: ImportedEntry, omitFile: boolean, protect: boolean, remote: boolean): string[] {
    const { variableName, resourceName, args } = entry;
    if (!IDENTIFIER.test(variableName) || UNAVAILABLE_IDENTIFIERS.has(variableName)) {
        throw new Error(`${quote(variableName)} cannot name a constant of the generated program`);
    }
    const fields = [
        `address: ${literal(args.address)},`,
        `names: [${args.names.map(literal).join(", ")}],`,
        ...(args.comment !== undefined ? [`comment: ${literal(args.comment)},`] : []),
        ...(omitFile ? [] : [`file: ${literal(args.file)},`]),
        ...(remote ? ["connection,"] : []),
        "adopt: true,",
    ];
    // Laid out as Biome and Prettier lay it out, so a formatter leaves the generated program as it is.
    if (!protect) {
        return [
            `const ${variableName} = new hosts.HostEntry(${literal(resourceName)}, {`,
            ...fields.map((f) => `    ${f}`),
            "});",
        ];
    }
    return [
        `const ${variableName} = new hosts.HostEntry(`,
        `    ${literal(resourceName)},`,
        "    {",
        ...fields.map((f) => `        ${f}`),
        "    },",
        "    { protect: true },",
        ");",
    ];
}

/**
 * Why a line belongs to the operating system: loopback, broadcast, IPv6 multicast and local-network
 * lines, and lines naming `localhost` or this machine. Undefined for any other line.
 */
function systemLineReason(entry: ParsedEntry, hostname: string | undefined): string | undefined {
    const address = entry.address.toLowerCase();
    const names = entry.names.map(foldCase);
    // The machine's short name, and any name of which it is the first label (its full names).
    const machine = hostname ? foldCase(hostname.split(".")[0] ?? hostname) : undefined;
    const namesMachine = names.some((name) => name === machine || name.split(".")[0] === machine);
    const what =
        entry.family === "ipv4" && address.startsWith("127.")
            ? "a loopback line"
            : address === "255.255.255.255"
              ? "the broadcast line"
              : entry.family === "ipv6" && (address === "::1" || /^(ff[0-9a-f]{2}|fe00):/.test(address))
                ? "an IPv6 loopback, multicast or local-network line"
                : names.includes("localhost")
                  ? "a line naming localhost"
                  : namesMachine
                    ? "a line naming this machine"
                    : undefined;
    return what && `${what}, which belongs to the operating system; pass --all to import it`;
}

/** Why a non-address line with content is ignored by resolvers; undefined for blanks and comments. */
function whyResolversIgnore(line: HostsLine): string | undefined {
    const [first] = resolverFields(line.text);
    if (first === undefined) return undefined;
    if (!addressFamily(first)) {
        return `${quote(toUtf8(first))} is not an IPv4 or IPv6 address, so resolvers ignore this line`;
    }
    return "the address has no names, so resolvers ignore this line";
}

/** The reason a line cannot be adopted because other lines of its family carry some of its names. */
function sharedNamesReason(doc: HostsDocument, line: HostsLine, entry: ParsedEntry): string | undefined {
    const shared = new Map<HostsLine, Set<string>>();
    for (const name of entry.names) {
        for (const other of doc.linesNaming(entry.family, name)) {
            if (other === line) continue;
            const names = shared.get(other) ?? new Set<string>();
            names.add(foldCase(name));
            shared.set(other, names);
        }
    }
    if (shared.size === 0) return undefined;
    const where = [...shared]
        .sort(([a], [b]) => doc.lineNumber(a) - doc.lineNumber(b))
        .map(
            ([other, names]) =>
                `${[...names].map(quote).join(", ")} on line ${doc.lineNumber(other)} ${quote(toUtf8(other.text))}`,
        )
        .join(", and ");
    const others = shared.size === 1 ? "another line carries" : "other lines carry";
    return (
        `${others} its ${FAMILY_LABEL[entry.family]} names (${where}); adopt takes over a name only from its ` +
        "single line, so merge these lines into one first"
    );
}

/** The declaration's arguments as `check` normalizes them, or its failures as sentences. */
function checkLine(entry: ParsedEntry, file: string): { args: ImportedEntryArgs } | { failures: string[] } {
    const raw: Record<string, unknown> = { address: entry.address, names: [...entry.names], file, adopt: true };
    if (entry.comment !== undefined) raw.comment = entry.comment;
    const { inputs, failures } = checkHostEntry(raw, () => file);
    if (failures.length > 0) return { failures: failures.map((f) => `${f.property} ${f.reason}`) };
    const args: ImportedEntryArgs = { address: inputs.address, names: inputs.names, file: inputs.file, adopt: true };
    if (inputs.comment !== undefined) args.comment = inputs.comment;
    return { args };
}

/** `base`, or the first of `base<separator>2`, `base<separator>3`... that `taken` lacks; records it. */
function unique(base: string, taken: Set<string>, separator: string): string {
    let candidate = base;
    for (let n = 2; taken.has(candidate); n++) candidate = `${base}${separator}${n}`;
    taken.add(candidate);
    return candidate;
}

/** A camelCase identifier for a resource name: `web.internal` -> `webInternal`, `1st` -> `host1st`. */
function identifierFor(resourceName: string): string {
    const words = resourceName
        .split(/[^A-Za-z0-9]+/)
        .filter((word) => word.length > 0)
        .map((word) => word.toLowerCase());
    const [first = "", ...rest] = words;
    let name = first + rest.map(capitalize).join("");
    if (!/^[a-z]/.test(name)) name = `host${capitalize(name)}`;
    return UNAVAILABLE_IDENTIFIERS.has(name) ? `${name}Host` : name;
}

function capitalize(word: string): string {
    return word.charAt(0).toUpperCase() + word.slice(1);
}

/** A string literal: JSON, with every character that could hide code or break a line escaped. */
function literal(text: string): string {
    return escapeInvisible(JSON.stringify(text));
}

/**
 * Text safe inside a `//` comment: no character that ends a line (U+2028 and U+2029 do, in
 * JavaScript), none that reorders or hides text, and no `*` `/` pair that would end a block comment if
 * the program is pasted into one. `*\/` is still the same string when the text is JSON.
 */
function commentText(text: string): string {
    return escapeInvisible(text).replaceAll("*/", "*\\/");
}

/** Replaces control, format (bidi), private, unassigned and non-space whitespace characters by `\uXXXX`. */
function escapeInvisible(text: string): string {
    return text.replace(/[\p{C}\p{Zl}\p{Zp}]|[^\S ]/gu, (character) => {
        let escaped = "";
        for (let i = 0; i < character.length; i++)
            escaped += `\\u${character.charCodeAt(i).toString(16).padStart(4, "0")}`;
        return escaped;
    });
}
