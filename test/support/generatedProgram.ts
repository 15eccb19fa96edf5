// Checks on a program printed by `hosts import`: that TypeScript accepts it (syntax, and types against
// the built package's declarations in dist/), what it declares when run, and that every comment stayed
// a comment.

import { runInNewContext } from "node:vm";
import ts from "typescript";
import { REPO_ROOT } from "./projects";

/** What the program passed to `new hosts.HostEntry(...)`, in order, with the constant holding each. */
export interface Declared {
    readonly variableName: string;
    readonly resourceName: string;
    readonly args: Record<string, unknown>;
    /** The resource options, when the declaration passes any. */
    readonly options?: unknown;
}

const COMPILER_OPTIONS: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    strict: true,
    noUnusedLocals: true,
    isolatedModules: true,
    skipLibCheck: true,
    noEmit: true,
    types: ["node"],
    // The package as a user's project sees it: its published declarations.
    paths: { "pulumi-lifecycle": [`${REPO_ROOT}/dist/index.d.ts`] },
};

let previous: ts.Program | undefined;
let counter = 0;
/**
 * The declaration files every check reads (TypeScript's lib, Node's, the SDK's, the package's), parsed
 * and bound once per process: a program whose root file is new reuses nothing of the old program's, so
 * parsing them again was most of what each check cost.
 */
const declarations = new Map<string, ts.SourceFile | undefined>();

/** Syntax errors, as `ts.transpileModule` reports them. */
export function syntaxErrors(source: string): string[] {
    const output = ts.transpileModule(source, {
        reportDiagnostics: true,
        compilerOptions: { ...COMPILER_OPTIONS, noEmit: false },
    });
    return (output.diagnostics ?? []).map(describe);
}

/** Every diagnostic of a strict type-check of `source` as a module of a project using the package. */
export function typeErrors(source: string): string[] {
    // A fresh name per program, so the old program's files are reused but this one is not.
    const fileName = `${REPO_ROOT}/test/generated-${++counter}.ts`;
    const host = ts.createCompilerHost(COMPILER_OPTIONS);
    const getSourceFile = host.getSourceFile.bind(host);
    const fileExists = host.fileExists.bind(host);
    host.getSourceFile = (name, languageVersion, ...rest) => {
        if (name === fileName) return ts.createSourceFile(name, source, languageVersion, true);
        if (!declarations.has(name)) declarations.set(name, getSourceFile(name, languageVersion, ...rest));
        return declarations.get(name);
    };
    host.fileExists = (name) => name === fileName || fileExists(name);
    const program = ts.createProgram([fileName], COMPILER_OPTIONS, host, previous);
    previous = program;
    return ts.getPreEmitDiagnostics(program).map(describe);
}

/**
 * Runs the program in a fresh context with a stand-in for the package that records each
 * `new hosts.HostEntry(name, args, options)`, and returns the declarations with the key under which
 * the exported `ids` and `lines` hold the entry's id and line number.
 */
export function runProgram(source: string): Declared[] {
    const { outputText } = ts.transpileModule(source, {
        compilerOptions: { ...COMPILER_OPTIONS, noEmit: false },
    });
    const created: { resourceName: string; args: Record<string, unknown>; options: unknown; instance: HostEntry }[] =
        [];
    class HostEntry {
        readonly id: string;
        readonly line: string;
        constructor(resourceName: string, args: Record<string, unknown>, options?: unknown, ...rest: unknown[]) {
            if (rest.length > 0) throw new Error("the program passes more arguments than (name, args, options)");
            this.id = `id of ${resourceName}`;
            this.line = `line of ${resourceName}`;
            created.push({ resourceName, args, options, instance: this });
        }
    }
    const fakeRequire = (id: string) => {
        if (id !== "pulumi-lifecycle") throw new Error(`the program requires ${JSON.stringify(id)}`);
        return { hosts: { HostEntry } };
    };
    const module = { exports: {} as Record<string, unknown> };
    runInNewContext(outputText, { require: fakeRequire, module, exports: module.exports });
    const exported = Object.keys(module.exports).filter((name) => name !== "__esModule");
    if (created.length === 0) {
        if (exported.length > 0) throw new Error(`a program without entries exports ${exported.join(", ")}`);
        return [];
    }
    if (exported.sort().join() !== "ids,lines") throw new Error(`the program exports ${exported.join(", ")}`);
    const ids = module.exports.ids as Record<string, unknown>;
    const lines = module.exports.lines as Record<string, unknown>;
    if (Object.keys(ids).length !== created.length || Object.keys(lines).length !== created.length) {
        throw new Error("ids and lines must hold one value per entry");
    }
    return created.map(({ resourceName, args, options, instance }) => {
        const keys = Object.keys(ids).filter((key) => ids[key] === instance.id);
        if (keys.length !== 1) throw new Error(`entry ${resourceName}'s id is exported as [${keys.join(", ")}]`);
        const variableName = keys[0] as string;
        if (lines[variableName] !== instance.line)
            throw new Error(`lines.${variableName} is not ${resourceName}'s line`);
        return {
            variableName,
            resourceName,
            args: JSON.parse(JSON.stringify(args)),
            ...(options !== undefined ? { options: JSON.parse(JSON.stringify(options)) } : {}),
        };
    });
}

/** The comments of the program, as the TypeScript scanner sees them. */
export function commentsOf(source: string): { kind: "line" | "block"; text: string }[] {
    const scanner = ts.createScanner(ts.ScriptTarget.ES2022, false, ts.LanguageVariant.Standard, source);
    const comments: { kind: "line" | "block"; text: string }[] = [];
    for (let token = scanner.scan(); token !== ts.SyntaxKind.EndOfFileToken; token = scanner.scan()) {
        if (token === ts.SyntaxKind.SingleLineCommentTrivia)
            comments.push({ kind: "line", text: scanner.getTokenText() });
        if (token === ts.SyntaxKind.MultiLineCommentTrivia)
            comments.push({ kind: "block", text: scanner.getTokenText() });
    }
    return comments;
}

function describe(diagnostic: ts.Diagnostic): string {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
    if (!diagnostic.file || diagnostic.start === undefined) return message;
    const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    return `${line + 1}:${character + 1} ${message}`;
}
