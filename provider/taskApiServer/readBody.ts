// Reading a request body off the socket, with a bound on what the server keeps and on what it drains.

import type { IncomingMessage } from "node:http";
import { MAX_BODY_BYTES } from "../tasks/protocol/wire";

/** Bodies beyond this are not even drained: the connection is closed. */
const MAX_DRAINED_BYTES = 64 * MAX_BODY_BYTES;

/** Reads the body, keeping at most MAX_BODY_BYTES; undefined when the connection ended first or sent far too much. */
export function readBody(req: IncomingMessage): Promise<{ body: Buffer; bodyTooLarge: boolean } | undefined> {
    return new Promise((resolve) => {
        const chunks: Buffer[] = [];
        let size = 0;
        req.on("data", (chunk: Buffer) => {
            size += chunk.length;
            if (size <= MAX_BODY_BYTES) chunks.push(chunk);
            else if (size > MAX_DRAINED_BYTES) {
                req.destroy();
                resolve(undefined);
            }
        });
        req.on("end", () => resolve({ body: Buffer.concat(chunks), bodyTooLarge: size > MAX_BODY_BYTES }));
        req.on("error", () => resolve(undefined));
        req.on("close", () => {
            if (!req.complete) resolve(undefined);
        });
    });
}
