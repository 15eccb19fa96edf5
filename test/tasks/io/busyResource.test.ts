// Guards the waits for a resource another operation runs on (AsyncApi.submit): a write refused 409
// (Azure's AnotherOperationInProgress) is sent again after doubling waits that grow past the poll
// schedule's longest, to a minute, so a long timeout does not send hundreds of refused writes (dialect
// chaos seed azure 6592: a destroy of a pending create whose create ran on, its DELETE refused every
// 10 s for two hours). The Azure guidelines dialect's server, written from its contract; fake time.

import { strict as assert } from "node:assert";
import type { AsyncResourceOutputs } from "../../../provider/tasks/asyncResourceSchema";
import { backoffBand, DEFAULT_POLL_SCHEDULE } from "../../../provider/tasks/client/pollSchedule";
import { PartialStateError } from "../../../provider/tasks/errors/partialStateError";
import { TaskApiError } from "../../../provider/tasks/errors/taskApiError";
import { BUSY_MAX_WAIT_MS } from "../../../provider/tasks/io/asyncApi";
import type { DialectServer } from "../../dialects/servers/kit";
import { heldOperations } from "../../dialects/servers/kit";
import { checked, FIXTURES, processOnFakeTime } from "../asyncResource/dialectFixtures";

const TIMEOUT_MS = 2 * 60 * 60_000;

/** The fewest waits of doubling backoff (each at least the low end of its band) that fill `spanMs`. */
function fewestWaits(spanMs: number, maxMs: number): number {
    const schedule = { ...DEFAULT_POLL_SCHEDULE, maxMs };
    let waited = 0;
    let waits = 0;
    while (waited < spanMs) waited += backoffBand(waits++, schedule).low;
    return waits;
}

describe("a write refused because another operation runs on the resource", () => {
    let server: DialectServer | undefined;
    afterEach(() => server?.close());

    it("is sent again after waits that grow to a minute, within its timeout (azure seed 6592)", async () => {
        const fixture = FIXTURES.find((entry) => entry.dialect === "azure");
        assert.ok(fixture);
        const held = heldOperations("create");
        server = await fixture.start({ operations: held });
        const args = { ...fixture.args(server.url, "w1", 3), timeouts: { delete: "2h" } };
        // The create's process is stopped at its first wait: its operation runs on at the API.
        const creating = processOnFakeTime({ onWait: () => creating.controller.abort(new Error("Ctrl-C")) });
        const error = await creating.provider.create(await checked(creating.provider, args)).catch((e) => e);
        assert.ok(error instanceof PartialStateError, String(error));
        // Its answer lost instead: nothing to follow, so the destroy finds w1 and sends DELETE.
        const { operation: _lost, ...state } = error.properties as unknown as AsyncResourceOutputs;
        let deletes = 0;
        const destroying = processOnFakeTime({
            killAt: (method) => {
                if (method === "DELETE") deletes++;
                return false;
            },
        });
        const refused = await destroying.provider.delete("w1", state as AsyncResourceOutputs).catch((e) => e);
        assert.ok(refused instanceof TaskApiError && refused.status === 409, String(refused));
        assert.match(refused.message, /AnotherOperationInProgress/);
        assert.ok(destroying.reports.some((line) => /another operation runs on it; waiting for it to end/.test(line)));
        // The poll schedule's longest wait (10 s) would have sent more than 700 DELETEs in two hours.
        assert.ok(deletes >= 10, `sent again while it was busy: ${deletes}`);
        assert.ok(
            deletes <= fewestWaits(TIMEOUT_MS, BUSY_MAX_WAIT_MS) + 1,
            `${deletes} DELETEs in two hours: the waits did not grow past ${DEFAULT_POLL_SCHEDULE.maxMs} ms`,
        );
        assert.ok(fewestWaits(TIMEOUT_MS, DEFAULT_POLL_SCHEDULE.maxMs) > 700);
        held.release();
    });
});
