// The datastore API's answers: list (with its filter and the list lag), get, create, resize and delete a
// datastore, and poll an operation. Plain calls of the model, which keeps the data; the HTTP server has
// already read the request, checked the token and the rate, and applied any fault.

import type { DatastoreList } from "../tasks/protocol/wire";
import { ApiError, badRequest } from "./apiError";
import type { TaskShape } from "./control";
import type { DatastoreModel } from "./datastoreModel";
import { parseCreateDatastore, parseResizeDatastore } from "./requests";
import {
    accepted,
    allowQuery,
    idempotencyOf,
    json,
    jsonBody,
    parseFilterParameter,
    type Reply,
    type Request,
    type Route,
} from "./routes";

/** What the datastore routes answer from: the model, and the clock that decides what a list shows yet. */
export interface DatastoreRoutes {
    readonly model: DatastoreModel;
    /** The server's clock. */
    readonly now: () => number;
    /** Lists show a datastore only this many milliseconds after it was created. */
    readonly listLagMs: number;
}

/**
 * Answers a datastore route; a mutation creates a task of `shape` when a fault gives one. Throws ApiError
 * for a bad query or body, an unknown id, or a conflict.
 */
export function answerDatastoreRequest(
    context: DatastoreRoutes,
    route: Route,
    request: Request,
    shape: TaskShape | undefined,
): Reply {
    switch (route.kind) {
        case "listDatastores": {
            allowQuery(request.query, ["filter"]);
            const filters = request.query.getAll("filter");
            if (filters.length > 1) throw badRequest("filter is given more than once; join clauses with and.");
            const filter = filters[0] === undefined ? undefined : parseFilterParameter(filters[0]);
            const lagMs = context.listLagMs;
            const items = context.model
                .list(filter)
                .filter((datastore) => lagMs === 0 || Date.parse(datastore.createdAt) <= context.now() - lagMs);
            return json(200, {
                items,
                count: items.length,
                offset: 0,
                total: items.length,
            } satisfies DatastoreList);
        }
        case "getDatastore": {
            allowQuery(request.query, []);
            const datastore = context.model.get(route.id);
            if (!datastore)
                throw new ApiError(404, "not_found", `there is no datastore with id ${JSON.stringify(route.id)}.`);
            return json(200, datastore);
        }
        case "getOperation":
            allowQuery(request.query, []);
            return json(200, context.model.poll(route.id));
        case "createDatastore": {
            allowQuery(request.query, []);
            const body = jsonBody(request);
            const create = parseCreateDatastore(body);
            return accepted(context.model.create(create, idempotencyOf(request, body), shape));
        }
        case "resizeDatastore": {
            allowQuery(request.query, []);
            const body = jsonBody(request);
            const resize = parseResizeDatastore(body);
            return accepted(context.model.resize(route.id, resize, idempotencyOf(request, body), shape));
        }
        case "deleteDatastore":
            allowQuery(request.query, []);
            return accepted(context.model.delete(route.id, idempotencyOf(request, undefined), shape));
    }
}
