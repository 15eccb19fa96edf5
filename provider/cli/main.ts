#!/usr/bin/env node
// `pulumi-lifecycle`, the package's command line. Subcommands are the entries of COMMANDS, selected by
// their leading words, so adding one is adding an entry. Failures are one line on stderr, never a
// stack trace: exit code 1 when a command could not do its work, 2 when it was used wrongly.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { codeOf } from "../shared/files/errno";
import { messageOf, quote } from "../shared/text";
import { CliError } from "./cliError";
import type { CliIo, Command } from "./command";
import { hostsImportCommand } from "./hostsImport";
import { taskApiCommand } from "./taskApi";

const PROGRAM = "pulumi-lifecycle";

/** Every subcommand, in the order `--help` lists them. */
export const COMMANDS: readonly Command[] = [hostsImportCommand, taskApiCommand];

/** Runs the command line `argv` (without node and the script) and resolves with the exit code. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
    try {
        return await dispatch(argv, io, COMMANDS);
    } catch (error) {
        const message = messageOf(error);
        io.stderr(`${PROGRAM}: ${message.replace(/\s*[\r\n]+\s*/g, " ")}\n`);
        return error instanceof CliError ? error.exitCode : 1;
    }
}

async function dispatch(argv: readonly string[], io: CliIo, commands: readonly Command[]): Promise<number> {
    const [first] = argv;
    if (first === "--version" || first === "-v") {
        io.stdout(`${packageVersion()}\n`);
        return 0;
    }
    if (first === "--help" || first === "-h" || first === "help") {
        io.stdout(usage(commands));
        return 0;
    }
    // The longest path wins, so `task-api` and `task-api serve` can both be commands.
    const command = [...commands]
        .sort((a, b) => b.path.length - a.path.length)
        .find((candidate) => candidate.path.every((word, index) => argv[index] === word));
    if (command) return await command.run(argv.slice(command.path.length), io);

    // A group of commands (`hosts`) with --help lists its commands; anything else is a usage error.
    const group = commands.filter((candidate) => argv.length > 1 && isPrefix(argv.slice(0, -1), candidate.path));
    const last = argv[argv.length - 1];
    if (group.length > 0 && (last === "--help" || last === "-h")) {
        io.stdout(usage(group));
        return 0;
    }
    const shown = argv.length === 0 ? "no command given" : `unknown command ${quote(argv.join(" "))}`;
    io.stderr(`${PROGRAM}: ${shown}\n\n${usage(commands)}`);
    return 2;
}

function isPrefix(words: readonly string[], path: readonly string[]): boolean {
    return words.length < path.length && words.every((word, index) => path[index] === word);
}

function usage(commands: readonly Command[]): string {
    const names = commands.map((command) => command.path.join(" "));
    const width = Math.max(...names.map((name) => name.length));
    const lines = commands.map((command, index) => `  ${(names[index] ?? "").padEnd(width)}  ${command.summary}`);
    return (
        `Usage: ${PROGRAM} <command> [options]\n\nCommands:\n${lines.join("\n")}\n\n` +
        `Run \`${PROGRAM} <command> --help\` for a command's options, \`${PROGRAM} --version\` for the version.\n`
    );
}

/** The version in package.json, two directories up from both provider/cli and dist/cli. */
function packageVersion(): string {
    const manifest = JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8")) as {
        version: string;
    };
    return manifest.version;
}

if (require.main === module) {
    // A reader that stops early (`| head`) closes the pipe; that is not a failure worth a stack trace.
    process.stdout.on("error", (error) => {
        if (codeOf(error) !== "EPIPE") throw error;
        process.exit(process.exitCode ?? 0);
    });
    const io: CliIo = {
        stdout: (text) => void process.stdout.write(text),
        stderr: (text) => void process.stderr.write(text),
        env: process.env,
    };
    void main(process.argv.slice(2), io).then((code) => {
        process.exitCode = code;
    });
}
