// The contract between the dispatcher (main.ts) and the subcommands, so that adding a subcommand is
// adding one entry to its table. Output goes through CliIo, so tests can run a command in process.

/** Where a command writes, and the environment it reads. */
export interface CliIo {
    stdout(text: string): void;
    stderr(text: string): void;
    readonly env: NodeJS.ProcessEnv;
}

/** A subcommand of `pulumi-lifecycle`. */
export interface Command {
    /** The words that select it after `pulumi-lifecycle`, e.g. `["hosts", "import"]`. */
    readonly path: readonly string[];
    /** One line for the command list of `pulumi-lifecycle --help`. */
    readonly summary: string;
    /**
     * Runs with the arguments that follow the path (its own `--help` included) and resolves with the exit
     * code. Throws CliError for failures to report in one line; any other error is reported by its
     * message, with exit code 1.
     */
    run(args: readonly string[], io: CliIo): Promise<number>;
}
