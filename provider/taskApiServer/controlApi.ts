// The answers of the task API server's test control API (`/_test/...`): faults, the request log, the
// clock, counters. Each is a call of the running server's own interface, so what a test does over HTTP
// and what it does in process are the same thing. The shapes it speaks are in control.ts.

import {
    type ClockState,
    type FaultRuleList,
    type FaultRuleRequest,
    type RequestLogList,
    TEST_API_PATH,
} from "./control";
import { allowQuery, json, jsonBody, methodNotAllowed, noRoute, type Reply, type Request } from "./routes";
import type { TaskApiServer } from "./serverOptions";
import { objectWithFields, requiredInteger } from "./validation";

/** Which methods each path of the control API takes. */
const CONTROL_METHODS: Readonly<Record<string, readonly string[]>> = {
    "/faults": ["GET", "POST", "DELETE"],
    "/requests": ["GET", "DELETE"],
    "/clock": ["POST"],
    "/stats": ["GET"],
};

/**
 * Answers a request under `/_test` on `server`; `advanceTasks` moves every task to where the server's
 * clock now puts it, so that a `POST /_test/clock` is on disk (flushed) before its answer leaves.
 * Throws ApiError for an unknown path, a method the path does not take, or a bad body.
 */
export async function answerControlRequest(
    request: Request,
    server: TaskApiServer,
    advanceTasks: () => void,
): Promise<Reply> {
    const sub = request.path.slice(TEST_API_PATH.length);
    const allowed = CONTROL_METHODS[sub];
    if (!allowed) throw noRoute(request.path);
    if (!allowed.includes(request.method)) throw methodNotAllowed(request.method, request.path, allowed);
    allowQuery(request.query, []);
    switch (`${request.method} ${sub}`) {
        case "POST /faults":
            return json(201, server.addFault(jsonBody(request) as FaultRuleRequest));
        case "GET /faults":
            return json(200, { items: server.faults() } satisfies FaultRuleList);
        case "DELETE /faults":
            return json(200, { cleared: server.clearFaults() });
        case "GET /requests": {
            const items = server.requests();
            return json(200, { items, count: items.length } satisfies RequestLogList);
        }
        case "DELETE /requests": {
            const cleared = server.requests().length;
            server.clearRequests();
            return json(200, { cleared });
        }
        case "POST /clock": {
            const body = objectWithFields(jsonBody(request), "the body", ["advanceMs"]);
            server.advanceClock(requiredInteger(body, "advanceMs", "the body", { min: 0, unit: "ms" }));
            advanceTasks();
            await server.flush();
            return json(200, { now: new Date(server.now()).toISOString() } satisfies ClockState);
        }
        default:
            return json(200, server.stats());
    }
}
