// The secrets provider of the tests' stacks: HashiCorp Vault's transit engine (`hashivault://`), served by a
// stand-in that wraps keys without a secret of its own.
//
// Why not the passphrase provider users start with: it derives its key with PBKDF2 (1,000,000 rounds of
// SHA-256) in every CLI start that opens the stack, about 0.17 CPU-s, which was 6-7% of `npm test`. A
// cloud secrets provider instead keeps a data key wrapped by the key service and unwraps it with one
// request; the stack's secrets are still encrypted with that data key (AES-256-GCM) by the real CLI.
// The secrets manager is not what the tests test: our providers see the same secret values whichever
// provider the stack has, and the suites that follow a user's own commands (the README, the packed
// package) keep the passphrase.
//
// The stand-in speaks the two calls of Vault's transit API that the CLI's driver (gocloud.dev's
// hashivault) makes, `PUT /v1/transit/encrypt/<key>` and `PUT /v1/transit/decrypt/<key>`, and is
// stateless (the "ciphertext" is the plaintext, marked), so any test process's stand-in reads a stack that
// another one made. It runs in a process of its own, so a test that waits synchronously on a CLI does not
// stop the service that CLI needs, and it exits when the test process does (its standard input closes).

import { spawn } from "node:child_process";
import { once } from "node:events";

const SERVER = `
const http = require("node:http");
const PREFIX = "vault:v1:";
const server = http.createServer((request, response) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
        const reply = (status, body) => {
            response.writeHead(status, { "content-type": "application/json" });
            response.end(JSON.stringify(body));
        };
        const match = /^\\/v1\\/transit\\/(encrypt|decrypt)\\/[\\w.-]+$/.exec(request.url ?? "");
        if (request.method !== "PUT" && request.method !== "POST") return reply(405, { errors: ["method"] });
        if (!match) return reply(404, { errors: ["no handler for " + request.url] });
        let body;
        try {
            body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        } catch {
            return reply(400, { errors: ["the body is not JSON"] });
        }
        if (match[1] === "encrypt" && typeof body.plaintext === "string") {
            return reply(200, { data: { ciphertext: PREFIX + body.plaintext } });
        }
        if (match[1] === "decrypt" && typeof body.ciphertext === "string" && body.ciphertext.startsWith(PREFIX)) {
            return reply(200, { data: { plaintext: body.ciphertext.slice(PREFIX.length) } });
        }
        return reply(400, { errors: ["invalid " + match[1] + " request"] });
    });
});
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"));
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
`;

/** What a stack made for a test names as its secrets provider, and the environment the CLI needs for it. */
export interface TestSecretsProvider {
    /** For `pulumi stack init --secrets-provider`. */
    readonly url: string;
    /** Where the CLI finds the transit service (VAULT_ADDR, VAULT_TOKEN). */
    readonly env: Record<string, string>;
}

let started: Promise<TestSecretsProvider> | undefined;

async function start(): Promise<TestSecretsProvider> {
    const child = spawn(process.execPath, ["-e", SERVER], { stdio: ["pipe", "pipe", "inherit"] });
    let output = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => (output += chunk));
    await Promise.race([
        once(child.stdout, "end"),
        new Promise<void>((resolve) => child.stdout.on("data", () => output.includes("\n") && resolve())),
    ]);
    const port = Number(output.trim());
    if (!Number.isInteger(port) || port <= 0) {
        throw new Error(`the Vault transit stand-in did not start (it printed ${JSON.stringify(output)})`);
    }
    // The test process may exit while it runs: it must not wait for the stand-in, which ends with it.
    child.unref();
    (child.stdin as unknown as { unref(): void }).unref();
    (child.stdout as unknown as { unref(): void }).unref();
    return {
        url: "hashivault://pulumi-lifecycle-tests",
        env: { VAULT_ADDR: `http://127.0.0.1:${port}`, VAULT_TOKEN: "pulumi-lifecycle-tests" },
    };
}

/** The stand-in of this test process, started on first use. */
export function testSecretsProvider(): Promise<TestSecretsProvider> {
    started ??= start();
    return started;
}
