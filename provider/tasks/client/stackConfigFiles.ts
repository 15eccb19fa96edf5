// What the stack config files of a Pulumi project say a key is today. The provider process runs in the
// project's directory; `pulumi destroy` and `pulumi refresh` configure it with the config the last
// `pulumi up` stored, so an error about a stored URL can say what the files say now. The process is not
// told which stack it serves, so every stack's file is read: a reader sees each value with its file.
// Plain values only: a secret (`secure:`) is not readable here and is left out. Read only on the way to
// an error, so synchronously.

import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { type ApiSettingNames, type ConfiguredValue, TASK_API_SETTINGS } from "../errors/apiSettings";

const STACK_FILE = /^Pulumi\.[^/\\]+\.ya?ml$/;

/**
 * The plain values the stack config files in `projectDir` (or its `stackConfigDir`) give `key`; undefined
 * when the directory cannot be read. Best effort: the files are YAML, and only the simple form
 * `  key: value` under `config:`, as `pulumi config set` writes it, is read.
 */
export function configuredValues(projectDir: string, key: string): ConfiguredValue[] | undefined {
    let dir = projectDir;
    try {
        const project = readFileSync(join(projectDir, "Pulumi.yaml"), "utf8");
        const configDir = /^stackConfigDir:\s*["']?([^"'\r\n#]+?)["']?\s*(?:#.*)?$/m.exec(project)?.[1];
        if (configDir) dir = join(projectDir, configDir);
    } catch {
        // No Pulumi.yaml (not a project directory): the files, if any, are beside it.
    }
    let names: string[];
    try {
        names = readdirSync(dir).filter((name) => STACK_FILE.test(name));
    } catch {
        return undefined;
    }
    const values: ConfiguredValue[] = [];
    for (const name of names.sort()) {
        let text: string;
        try {
            text = readFileSync(join(dir, name), "utf8");
        } catch {
            continue;
        }
        const value = plainValue(text, key);
        if (value !== undefined) values.push({ file: relative(projectDir, join(dir, name)), value });
    }
    return values;
}

/** The value of `key` under the file's `config:` mapping, when it is a plain scalar. */
function plainValue(text: string, key: string): string | undefined {
    const escaped = key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const line = new RegExp(`^[ \\t]+["']?${escaped}["']?:[ \\t]*(.*?)[ \\t]*$`, "m").exec(text)?.[1];
    if (!line) return undefined;
    const quoted = /^(["'])(.*)\1$/.exec(line);
    const value = quoted ? (quoted[2] as string) : line.replace(/\s+#.*$/, "");
    return value === "" ? undefined : value;
}

/** The stack config key of the task API's URL. */
const TASK_API_URL_KEY = "pulumi-lifecycle:taskApiUrl";

/** The task API's settings, with what the stack config files in `projectDir` say its URL is when asked. */
export function taskApiSettingsIn(projectDir: string): ApiSettingNames {
    return {
        ...TASK_API_SETTINGS,
        urlConfig: { key: TASK_API_URL_KEY, today: () => configuredValues(projectDir, TASK_API_URL_KEY) },
    };
}
