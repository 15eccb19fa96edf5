// A TCP proxy in front of a fleet machine for the network faults: a connection that drops after exactly
// N more client-to-server bytes ("drops the connection mid-write"), a machine whose port refuses
// connections, and a machine that drops every open connection now. Deterministic: a cut happens at a
// byte count, never after a delay.

import { once } from "node:events";
import { connect, createServer, type Server, type Socket } from "node:net";

/** Where a cut happened: which connection (1-based, in accept order) and after how many bytes in all. */
export interface Cut {
    readonly connection: number;
    /** `clientToServer` when the connection was cut: every byte up to here reached the server. */
    readonly clientToServer: number;
}

/** A proxy listening on 127.0.0.1:`port`, forwarding to its target both ways. */
export interface CuttingProxy {
    readonly host: "127.0.0.1";
    readonly port: number;
    /** Bytes forwarded client to server, over all connections so far. */
    readonly clientToServer: number;
    /** Bytes forwarded server to client, over all connections so far. */
    readonly serverToClient: number;
    /** Connections accepted so far. */
    readonly connections: number;
    /** Connections open now. */
    readonly open: number;
    /** The armed cuts that happened, in order. */
    readonly cuts: readonly Cut[];
    /**
     * Arms a cut: the connection carrying the `bytes`-th next client-to-server byte gets exactly up to
     * that byte delivered to the server (then the server side is ended), and both of its sockets are
     * destroyed. One-shot: later connections pass untouched. `bytes` 0 cuts at the next byte a client sends.
     */
    cutAfter(bytes: number): void;
    /** Cancels an armed cut that has not happened. */
    disarm(): void;
    /** Resolves with the next armed cut once it happens. */
    whenCut(): Promise<Cut>;
    /** Destroys every open connection now (the machine drops off the network); keeps listening. */
    dropAll(): void;
    /** Forwards new connections to `next` from now on, and destroys every open one (to the old target). */
    retarget(next: { host: string; port: number }): void;
    /** Stops listening: connecting to `port` is refused (ECONNREFUSED) until `accept()`. Open ones stay. */
    refuse(): Promise<void>;
    /** Listens again on the same port. */
    accept(): Promise<void>;
    /** Stops listening and destroys every connection. */
    close(): Promise<void>;
}

/** Starts a proxy to `target` on a free 127.0.0.1 port. */
export async function startCuttingProxy(first: { host: string; port: number }): Promise<CuttingProxy> {
    let target = first;
    let server: Server | undefined;
    let port = 0;
    let clientToServer = 0;
    let serverToClient = 0;
    let connections = 0;
    let remaining: number | undefined;
    const cuts: Cut[] = [];
    const waiting: ((cut: Cut) => void)[] = [];
    const pairs = new Set<[Socket, Socket]>();

    const drop = (pair: [Socket, Socket]) => {
        pairs.delete(pair);
        pair[0].destroy();
        pair[1].destroy();
    };

    const handle = (client: Socket) => {
        connections += 1;
        const number = connections;
        const upstream = connect(target.port, target.host);
        const pair: [Socket, Socket] = [client, upstream];
        pairs.add(pair);
        let cutting = false;
        client.on("data", (chunk: Buffer) => {
            if (cutting) return;
            if (remaining !== undefined && chunk.length >= remaining) {
                const part = chunk.subarray(0, remaining);
                remaining = undefined;
                cutting = true;
                client.pause();
                clientToServer += part.length;
                const cut = { connection: number, clientToServer };
                cuts.push(cut);
                // end(): the bytes before the cut reach the server, in order, before the connection goes.
                upstream.end(part, () => {
                    drop(pair);
                    for (const resolve of waiting.splice(0)) resolve(cut);
                });
                return;
            }
            if (remaining !== undefined) remaining -= chunk.length;
            clientToServer += chunk.length;
            if (!upstream.write(chunk)) client.pause();
        });
        upstream.on("drain", () => {
            if (!cutting) client.resume();
        });
        upstream.on("data", (chunk: Buffer) => {
            if (cutting) return;
            serverToClient += chunk.length;
            if (!client.write(chunk)) upstream.pause();
        });
        client.on("drain", () => upstream.resume());
        // A half close passes through (SSH does not use it, but a faithful proxy forwards it).
        client.on("end", () => {
            if (!cutting) upstream.end();
        });
        upstream.on("end", () => client.end());
        for (const socket of pair) {
            socket.on("error", () => drop(pair));
            socket.on("close", () => drop(pair));
        }
    };

    const listen = async () => {
        const next = createServer(handle);
        next.listen(port, "127.0.0.1");
        await once(next, "listening");
        server = next;
        port = (next.address() as { port: number }).port;
    };
    const stopListening = async () => {
        const current = server;
        server = undefined;
        if (!current) return;
        // close() stops accepting at once; its callback would wait for the open connections.
        const closed = once(current, "close");
        current.close();
        if (pairs.size === 0) await closed;
    };

    await listen();
    return {
        host: "127.0.0.1",
        get port() {
            return port;
        },
        get clientToServer() {
            return clientToServer;
        },
        get serverToClient() {
            return serverToClient;
        },
        get connections() {
            return connections;
        },
        get open() {
            return pairs.size;
        },
        cuts,
        cutAfter(bytes) {
            if (!Number.isInteger(bytes) || bytes < 0)
                throw new Error(`cutAfter needs a byte count >= 0, not ${bytes}`);
            remaining = bytes;
        },
        disarm() {
            remaining = undefined;
        },
        whenCut() {
            return new Promise((resolve) => waiting.push(resolve));
        },
        dropAll() {
            for (const pair of [...pairs]) drop(pair);
        },
        retarget(next) {
            target = next;
            for (const pair of [...pairs]) drop(pair);
        },
        refuse: stopListening,
        async accept() {
            if (!server) await listen();
        },
        async close() {
            for (const pair of [...pairs]) drop(pair);
            await stopListening();
        },
    };
}

/** A 127.0.0.1 port nothing listens on now (it was just free): connecting to it is refused. */
export async function closedPort(): Promise<number> {
    const server = createServer();
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    return port;
}
