// What the dialect chaos suite found in tasks.AsyncResource's engine, each shrunk by hand from its seed
// to the smallest program that breaks an invariant, and replayed here deterministically: the provider in
// this process (time passes only when it waits), one dialect's server, scripted faults and operations,
// the engine's bookkeeping done by hand as dialectEngine.ts does it. Each test asserts the invariant, so
// it fails on the engine as it was found and passes once the finding is fixed (the proposed fixes are in
// the report of the chaos suite). `replay:` names the seed of chaosDialects.test.ts where it was found.

import { strict as assert } from "node:assert";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { AsyncResourceProvider } from "../../../provider/tasks/asyncResourceProvider";
import type { AsyncResourceInputs, AsyncResourceOutputs } from "../../../provider/tasks/asyncResourceSchema";
import { CreateTokenSpentError } from "../../../provider/tasks/errors/createTokenSpentError";
import { OperationWaitError } from "../../../provider/tasks/errors/operationWaitError";
import { PartialStateError } from "../../../provider/tasks/errors/partialStateError";
import { SENT_CREATES_DIR_ENV } from "../../../provider/tasks/io/sentCreates";
import type { TaskProcessContext } from "../../../provider/tasks/processContext";
import {
    DEFAULT_OPERATION,
    fixedOperations,
    heldOperations,
    noFaults,
    type OperationPlan,
    type OperationScript,
    scriptedFaults,
    scriptedOperations,
} from "../../dialects/servers/kit";
import { recordsDirectory } from "../../support/recordsDirectory";
import { TOKEN_ENV, WIDGETS_TOKEN } from "../../tasks/asyncResource/dialectFixtures";
import { type ChaosServer, type ServerVariant, startChaosServer } from "./dialectServers";

const START = Date.parse("2030-01-01T00:00:00.000Z");
const TOKEN = "tok-finding-0001";

type Props = Record<string, unknown>;

/** Wraps one request of a process under test (processOf's `fetch`). */
type FetchHook = (
    send: () => Promise<Response>,
    request: { method: string; url: string; body: string },
    stop: () => void,
) => Promise<Response>;

/** A provider process: time passes only when it waits; `interrupt` and `fetch` let a test stop it where it wants. */
function processOf(
    server: ChaosServer,
    options: {
        /** Ctrl-C on the nth wait (the first wait of a create is its first wait for its operation). */
        ctrlCOnWait?: number;
        /** Where it records its keyed creates in flight (sentCreates.ts); by default this test process's. */
        sentCreates?: string;
        /** Wraps each request; `stop` aborts the process's signal (Ctrl-C, or a kill when its answers are then ignored). */
        fetch?: FetchHook;
        /** Its clock's first reading (a later process of the same user starts later). */
        startsAt?: number;
    } = {},
) {
    let now = options.startsAt ?? START;
    let waits = 0;
    const controller = new AbortController();
    const stop = () => controller.abort(new Error("cancelled (Ctrl-C)"));
    const context: TaskProcessContext = {
        clock: () => now,
        sleep: async (ms, signal) => {
            signal?.throwIfAborted();
            now += ms;
            if (++waits === options.ctrlCOnWait) stop();
            signal?.throwIfAborted();
        },
        random: () => 0.5,
        signal: controller.signal,
        report: () => undefined,
        track: (work) => work,
    };
    const wrapped: typeof fetch = (input, init) => {
        const send = () => fetch(input, init);
        if (!options.fetch) return send();
        const request = { method: init?.method ?? "GET", url: String(input), body: String(init?.body ?? "") };
        return options.fetch(send, request, stop);
    };
    const env = {
        [TOKEN_ENV]: WIDGETS_TOKEN,
        TASK_POLL_INITIAL_MS: "100",
        ...server.fixture.env,
        [SENT_CREATES_DIR_ENV]: options.sentCreates ?? recordsDirectory(),
    };
    return { provider: new AsyncResourceProvider(context, env, wrapped), stop };
}

/** A process's `fetch` option: it dies with the answer to its first POST (a kill, once its answers are ignored). */
const DIES_WITH_ITS_POST: FetchHook = async (send, request, stop) => {
    const answer = await send();
    if (request.method === "POST") stop();
    return answer;
};

/** The same for Cloud Control, where every call is a POST: it dies with the answer to its CreateResource. */
const DIES_WITH_ITS_CREATE_RESOURCE: FetchHook = async (send, request, stop) => {
    const answer = await send();
    if (request.body.includes('"DesiredState"')) stop();
    return answer;
};

/**
 * Runs `work` with two fresh directories for processes' records of writes in flight (the second for a
 * process that must not lean on the first's record), removed after.
 */
async function withRecords(work: (first: string, second: string) => Promise<void>): Promise<void> {
    const [first, second] = [1, 2].map(() => mkdtempSync(join(tmpdir(), "findings-sent-"))) as [string, string];
    try {
        await work(first, second);
    } finally {
        for (const directory of [first, second]) rmSync(directory, { recursive: true, force: true });
    }
}

async function start(dialect: string, variant: ServerVariant = {}, operations: OperationPlan = fixedOperations({})) {
    return startChaosServer(dialect, { faults: noFaults(), operations, clock: Date.now, variant });
}

/** The inputs as check returns them, through protobuf as the engine passes them. */
async function inputsOf(
    provider: AsyncResourceProvider,
    server: ChaosServer,
    name: string,
    size: number,
    extra: Props = {},
) {
    const args = { ...server.fixture.args(server.server.url, name, size), ...extra };
    const { inputs, failures } = await provider.check(
        {} as AsyncResourceInputs,
        args as unknown as AsyncResourceInputs,
    );
    assert.deepEqual(failures, []);
    return encode(inputs as unknown as Props) as unknown as AsyncResourceInputs;
}

/** What the SDK's server sends the engine (it throws on what protobuf cannot carry). */
function encode(props: Props): Props {
    return Struct.fromJavaScript(props as Parameters<typeof Struct.fromJavaScript>[0]).toJavaScript() as Props;
}

/** The state the engine records after a create or update that failed with partial state. */
async function partialOf(work: Promise<unknown>): Promise<AsyncResourceOutputs> {
    const error = await work.then(
        () => assert.fail("the operation succeeded"),
        (caught: unknown) => caught,
    );
    assert.ok(error instanceof PartialStateError, `partial state, not ${String(error)}`);
    return encode(error.properties) as unknown as AsyncResourceOutputs;
}

async function outcome(work: Promise<unknown>): Promise<unknown> {
    return work.then(
        () => undefined,
        (error: unknown) => error,
    );
}

function liveNames(server: ChaosServer): string[] {
    return server.server.resources().map((record) => String(server.fixture.nameOf(record)));
}

describe("chaos against every dialect's server: findings, each as the smallest program that breaks", function () {
    this.timeout(60_000);
    let server: ChaosServer | undefined;
    afterEach(async () => {
        await server?.server.close();
        server = undefined;
    });

    it("K: `--import-pending-creates` (and AsyncResource.get) read a resource the SDK can send back (replay: azure seed 10)", async () => {
        // The engine reads a pending create, or a `get`, with the inputs as props: no `tainted` there.
        server = await start("generic");
        const { provider } = processOf(server);
        const inputs = await inputsOf(provider, server, "w1", 3);
        await provider.create(inputs);
        const read = await provider.read("w1", inputs as unknown as AsyncResourceOutputs);
        assert.equal(read.id, "w1");
        assert.doesNotThrow(
            () => encode(read.props as unknown as Props),
            "the SDK fails the read: Unexpected struct type",
        );
    });

    it("C: a refresh keeps a create that timed out while its operation still runs (zombies; replay: aws-cloudcontrol seed 28)", async () => {
        server = await start("aws-cloudcontrol", {}, scriptedOperations({ kind: "create", pollsToFinish: 40 }));
        const { provider } = processOf(server);
        const inputs = await inputsOf(provider, server, "w1", 3, { timeouts: { create: "20s" } });
        const state = await partialOf(provider.create(inputs));
        assert.equal(state.tainted, true);
        const refreshed = await provider.read("w1", state);
        await server.settle();
        assert.deepEqual(liveNames(server), ["w1"], "the operation made w1");
        assert.equal(refreshed.id, "w1", "the refresh forgot a create whose operation went on to make w1: a zombie");
    });

    it("G: deleting a create of unknown outcome does not leave it to appear later (zombies; replay: generic seed 8)", async () => {
        // The create's answer is lost; its retry (same Idempotency-Key) is refused 409 while it runs:
        // partial state with no handle. The widget is not listed while it is being created.
        server = await start("generic", {}, scriptedOperations({ kind: "create", pollsToFinish: 3 }));
        server.server.setFaults(scriptedFaults([{ operation: "create", fault: { kind: "lose-answer" } }]));
        const { provider } = processOf(server);
        const inputs = await inputsOf(provider, server, "w1", 3, { createToken: TOKEN });
        const state = await partialOf(provider.create(inputs));
        assert.equal(state.resourceId, undefined);
        const deleted = (await outcome(provider.delete("w1", state))) === undefined;
        await server.settle();
        // A delete that fails keeps the resource in the state: only one that said done must leave nothing.
        assert.deepEqual(
            deleted ? liveNames(server) : [],
            [],
            "the delete said done, and the create went on to make w1: a zombie",
        );
    });

    it("G (no createToken): the same after Ctrl-C as Cloud Control answers the create (zombies; replay: aws-cloudcontrol seed 13)", async () => {
        server = await start("aws-cloudcontrol", {}, scriptedOperations({ kind: "create", pollsToFinish: 3 }));
        const created = server;
        const { provider } = processOf(server, {
            fetch: DIES_WITH_ITS_CREATE_RESOURCE,
        });
        const inputs = await inputsOf(provider, created, "w1", 3);
        const state = await partialOf(provider.create(inputs));
        const next = processOf(created);
        const deleted = (await outcome(next.provider.delete("w1", state))) === undefined;
        await created.settle();
        assert.deepEqual(
            deleted ? liveNames(created) : [],
            [],
            "the delete said done, and the create went on to make w1: a zombie",
        );
    });

    it("U: the destroy of a create without a createToken that Ctrl-C cut before it was sent sends that request once, never another, and ends (heal; replay: google seed 8344)", async () => {
        // The request the create sends again is a new one to the server: its operation fails, making nothing.
        const started = await start("google", {}, scriptedOperations({ kind: "create", outcome: "failed" }));
        server = started;
        const cut = processOf(started, {
            fetch: async (send, request, stop) => {
                if (request.method !== "POST") return send();
                stop();
                throw new Error("cancelled (Ctrl-C)");
            },
        });
        const timeouts = { delete: "2s" };
        const state = await partialOf(
            cut.provider.create(await inputsOf(cut.provider, started, "w1", 3, { timeouts })),
        );
        assert.ok(state.createKey, "the request's own key is recorded, to replay it");
        await withRecords(async (records) => {
            const destroy = async (startsAt: number, delete_: string) => {
                let posts = 0;
                const { provider } = processOf(started, {
                    sentCreates: records,
                    startsAt,
                    fetch: async (send, request) => {
                        if (request.method === "POST") posts++;
                        return send();
                    },
                });
                const ended = await outcome(provider.delete("w1", { ...state, timeouts: { delete: delete_ } }));
                assert.equal(posts, 1, "the cut request is sent again, and no create of the delete's own");
                return ended;
            };
            // The server has the request for the first time: its operation fails, making nothing.
            assert.ok((await destroy(START, "2s")) instanceof PartialStateError);
            // Sent again, it answers that operation at once; but 2 s are too few to rule out a read that
            // lags (the reads after an operation span 3.1 s here): the destroy fails, saying to run it again.
            assert.ok((await destroy(START, "2s")) instanceof CreateTokenSpentError);
            // Run again a minute later, one read tells: the request made nothing, and the destroy ends.
            assert.equal(await destroy(START + 60_000, "2s"), undefined);
            // With time for the reads, one destroy ends, and makes nothing either.
            assert.equal(await destroy(START, "1m"), undefined);
        });
        assert.deepEqual(liveNames(started), []);
    });

    it("S2: the destroy of an Azure create stopped as its PUT was answered joins its operation, which reads do not show yet (zombies; replay: azure seed 10407)", async () => {
        // The widget shows in reads only once its create's operation has ended.
        server = await start("azure", {}, scriptedOperations({ kind: "create", pollsToFinish: 3, resultLate: true }));
        const started = server;
        const stopped = processOf(started, {
            fetch: async (send, request, stop) => {
                const answer = await send();
                if (request.method === "PUT") stop();
                return answer;
            },
        });
        const state = await partialOf(stopped.provider.create(await inputsOf(stopped.provider, started, "w1", 3)));
        assert.equal(state.operation, undefined, "nothing to follow the create by");
        const deleted = (await outcome(processOf(started).provider.delete("w1", state))) === undefined;
        await started.settle();
        assert.deepEqual(
            deleted ? liveNames(started) : [],
            [],
            "the delete said done, and the create went on to make w1: a zombie",
        );
        assert.ok(deleted, "the destroy ends");
    });

    it("I: a delete that followed its create to the end reads past a replica that lags (zombies; replay: azure seed 28)", async () => {
        server = await start("azure", {}, scriptedOperations({ kind: "create", pollsToFinish: 3, resultLate: true }));
        const { provider } = processOf(server, { ctrlCOnWait: 1 });
        const inputs = await inputsOf(provider, server, "w1", 3);
        const state = await partialOf(provider.create(inputs));
        assert.ok(state.operation, "the handle is recorded");
        await processOf(server).provider.delete("w1", state);
        assert.deepEqual(liveNames(server), [], "the delete read 404 from a lagging replica and forgot w1: a zombie");
    });

    it("N: after a refresh clears the engine's init errors, the next up still resolves a pending create (state; replay: azure seed 50)", async () => {
        // The engine forces Update only while init errors are on record; a refresh clears them.
        server = await start("generic", {}, scriptedOperations({ kind: "create", pollsToFinish: 5 }));
        const { provider } = processOf(server, { ctrlCOnWait: 1 });
        const inputs = await inputsOf(provider, server, "w1", 3);
        const state = await partialOf(provider.create(inputs));
        const diff = await provider.diff("w1", state, inputs);
        assert.equal(diff.changes, true, "no change: the up never calls update, and the create is never resolved");
    });

    it("E: an update that followed the operation on record does not keep it (state; replay: google seed 7)", async () => {
        server = await start("google", {}, scriptedOperations({ kind: "create", pollsToFinish: 3 }));
        const { provider } = processOf(server, { ctrlCOnWait: 1 });
        const inputs = await inputsOf(provider, server, "w1", 3);
        const state = await partialOf(provider.create(inputs));
        const next = processOf(server).provider;
        // AIP-151 lists w1 while it is being created; the refresh leaves it pending until an up resolves it.
        const refreshed = await next.read("w1", state);
        assert.equal(refreshed.props?.resourceId, undefined, "the refresh recorded w1 while it was CREATING");
        assert.ok(refreshed.props?.operation, "the refresh kept the create's operation");
        const updated = await next.update("w1", encode(refreshed.props as unknown as Props) as never, inputs);
        assert.ok(updated.outs?.resourceId);
        assert.equal(updated.outs?.operation, undefined, "the operation followed to its end stays on record");
    });

    it("A: no duplicate beside someone else's resource where the API accepts two with one name (duplicates; replay: generic seed 3)", async () => {
        server = await start("generic", { allowDuplicateNames: true });
        const outsider = processOf(server).provider;
        await outsider.create(await inputsOf(outsider, server, "w1", 3));
        const { provider } = processOf(server);
        const adopting = await inputsOf(provider, server, "w1", 4, { createToken: TOKEN, adopt: true });
        await outcome(provider.create(adopting));
        assert.equal(server.server.counts().duplicates, 0, "adopt: true with a createToken made a second w1");
        const refusing = await inputsOf(provider, server, "w1", 4, { createToken: `${TOKEN}-2` });
        await outcome(provider.create(refusing));
        assert.equal(server.server.counts().duplicates, 0, "a createToken beside someone else's w1 made a second one");
    });

    it("O: a create Cloud Control fails because someone else holds the key is not recorded as ours (foreign; replay: aws-cloudcontrol seed 92)", async () => {
        server = await start("aws-cloudcontrol", { handlerErrors: "event" });
        const outsider = processOf(server).provider;
        await outsider.create(await inputsOf(outsider, server, "w1", 3));
        const { provider } = processOf(server);
        const error = await outcome(provider.create(await inputsOf(provider, server, "w1", 4, { createToken: TOKEN })));
        const recorded = error instanceof PartialStateError ? error.properties.resourceId : undefined;
        assert.equal(
            recorded,
            undefined,
            "someone else's w1 is recorded as this resource's (untaint then takes it; a replace deletes it)",
        );
    });

    it("O2: a create interrupted while someone else held its key: no refresh takes theirs, no delete removes it (foreign; replay: aws-cloudcontrol seed 6449)", async () => {
        server = await start("aws-cloudcontrol", { handlerErrors: "event" });
        const outsider = processOf(server).provider;
        await outsider.create(await inputsOf(outsider, server, "w1", 3));
        // Cloud Control takes the create (the key names the item, so the token's replay tells whether the
        // w1 there is ours); Ctrl-C while it runs leaves a pending create with its operation.
        const { provider } = processOf(server, { ctrlCOnWait: 1 });
        const inputs = await inputsOf(provider, server, "w1", 4, { createToken: TOKEN });
        const state = await partialOf(provider.create(inputs));
        assert.equal(state.resourceId, undefined);
        assert.ok(state.operation, "the operation is recorded");
        assert.equal(state.keyHeldBy, "w1", "what held the key when the create was sent is recorded");
        const theirs = () => server?.server.resources().map((record) => [record.Name, record.Size]);
        // The refresh (and the `up` after it) keep the create pending; the create's operation ended FAILED.
        const refreshed = await processOf(server).provider.read("w1", state);
        assert.equal(refreshed.props?.resourceId, undefined, "the refresh recorded someone else's w1 as ours");
        const up = await outcome(processOf(server).provider.update("w1", state, inputs));
        assert.match(String(up), /ResourceExistsError/);
        // The destroy follows the operation to its FAILED end and leaves their w1 alone.
        assert.equal(await outcome(processOf(server).provider.delete("w1", state)), undefined);
        await server.settle();
        assert.deepEqual(theirs(), [["w1", 3]], "someone else's w1 was deleted or changed");
    });

    it("O3: a create sent while someone else held its key, then followed after its process died, does not take theirs (foreign; replay: aws-cloudcontrol seed 9877)", async () => {
        server = await start("aws-cloudcontrol", { handlerErrors: "event" });
        const started = server;
        const outsider = processOf(started).provider;
        await outsider.create(await inputsOf(outsider, started, "w1", 3));
        const theirs = () => started.server.resources().map((record) => [record.Name, record.Size]);
        await withRecords(async (records) => {
            // The create is sent while their w1 holds the key; its process is stopped as it is answered.
            const first = processOf(started, {
                sentCreates: records,
                fetch: DIES_WITH_ITS_CREATE_RESOURCE,
            });
            const inputs = await inputsOf(first.provider, started, "w1", 4, { createToken: TOKEN });
            assert.ok((await outcome(first.provider.create(inputs))) instanceof Error);
            // The next up follows that create (the record of creates in flight) and is stopped in turn:
            // what its partial state says of their w1 decides what the up after it does.
            const next = processOf(started, { sentCreates: records, ctrlCOnWait: 1 });
            const state = await partialOf(next.provider.create(inputs));
            assert.equal(state.resourceId, undefined);
            assert.equal(state.keyHeldBy, "w1", "what held the key when the create was sent is recorded");
            // untaint: true keeps what the create made; it made nothing, and their w1 is not taken.
            const untainted = { ...inputs, untaint: true };
            const up = await outcome(
                processOf(started, { sentCreates: records }).provider.update("w1", state, untainted),
            );
            assert.match(String(up), /ResourceExistsError/);
        });
        await started.settle();
        assert.deepEqual(theirs(), [["w1", 3]], "someone else's w1 was changed");
    });

    it("T: a destroy stopped while its delete runs does not leave the next up or refresh recording what it deleted (state; replay: generic seed 6499)", async () => {
        const started = await start("generic", {}, scriptedOperations({ kind: "delete", pollsToFinish: 3 }));
        server = started;
        await withRecords(async (record) => {
            // A create whose process stops as its POST is answered: pending, with the key it was sent with.
            const first = processOf(started, { sentCreates: record, fetch: DIES_WITH_ITS_POST });
            const inputs = await inputsOf(first.provider, started, "w1", 3);
            const state = await partialOf(first.provider.create(inputs));
            assert.equal(state.resourceId, undefined);
            // Its destroy replays that key, finds w1, and is stopped at the first look at its delete: the
            // stack keeps the pending create, and the delete runs on at the API.
            let deleteSent = false;
            const destroying = processOf(started, {
                sentCreates: record,
                fetch: async (send, request, stop) => {
                    const answer = await send();
                    if (request.method === "DELETE") deleteSent = true;
                    else if (deleteSent && request.url.includes("/monitors/")) stop();
                    return answer;
                },
            });
            assert.ok((await outcome(destroying.provider.delete("w1", state))) !== undefined, "the destroy stopped");
            assert.deepEqual(liveNames(started), ["w1"], "the delete still runs");
            const refreshed = await processOf(started, { sentCreates: record }).provider.read("w1", state);
            assert.equal(refreshed.props?.resourceId, undefined, "the refresh recorded the widget being deleted");
            const { outs } = await processOf(started, { sentCreates: record }).provider.update("w1", state, inputs);
            await started.settle();
            const live = started.server.resources().map((widget) => widget.id);
            assert.deepEqual(live, [outs?.resourceId], "the up recorded the widget its own delete removed");
        });
    });

    it("T2: a destroy killed once Cloud Control took its delete does not leave the next up recording what it deleted (state; replay: aws-cloudcontrol seed 10657)", async () => {
        const started = await start(
            "aws-cloudcontrol",
            {},
            scriptedOperations({ kind: "create", pollsToFinish: 1 }, { kind: "delete", pollsToFinish: 2 }),
        );
        server = started;
        await withRecords(async (record) => {
            // A create stopped (Ctrl-C) at its first wait for its operation: pending, the operation on record.
            const first = processOf(started, { sentCreates: record, ctrlCOnWait: 1 });
            const inputs = await inputsOf(first.provider, started, "w1", 3, { createToken: TOKEN });
            const state = await partialOf(first.provider.create(inputs));
            assert.equal(state.resourceId, undefined);
            assert.ok(state.operation, "the create's operation is on record");
            // Its destroy follows that create to w1 and is killed once DeleteResource is answered: the stack
            // keeps the pending create, and the delete runs on at the API.
            const destroying = processOf(started, {
                sentCreates: record,
                fetch: async (send, _request, stop) => {
                    const answer = await send();
                    if ((await answer.clone().text()).includes('"Operation":"DELETE"')) stop();
                    return answer;
                },
            });
            assert.ok((await outcome(destroying.provider.delete("w1", state))) !== undefined, "the destroy stopped");
            assert.deepEqual(liveNames(started), ["w1"], "the delete still runs");
            const { outs } = await processOf(started, { sentCreates: record }).provider.update("w1", state, inputs);
            await started.settle();
            assert.deepEqual(
                liveNames(started),
                [outs?.resourceId],
                "the up recorded the widget its own delete removed",
            );
        });
    });

    it("V: `--import-pending-creates` of a killed create finds a widget its list shows late (zombies; replay: generic seed 6625)", async () => {
        const operations = scriptedOperations({ kind: "create", pollsToFinish: 1, resultLate: true });
        const started = await start("generic", {}, operations);
        server = started;
        // Killed once its POST was answered: the engine keeps a pending create with the inputs only.
        const killed = processOf(started, { fetch: DIES_WITH_ITS_POST });
        const inputs = await inputsOf(killed.provider, started, "w1", 3);
        await outcome(killed.provider.create(inputs));
        await started.settle();
        const imported = await processOf(started).provider.read("w1", inputs as unknown as AsyncResourceOutputs);
        assert.deepEqual(liveNames(started), ["w1"]);
        assert.equal(
            imported.props?.resourceId,
            started.server.resources()[0]?.id,
            "the import read the list once, missed w1, and left it to no one",
        );
    });

    it("W: a pending create resumed after its resource drifted sends the program's body (state; replay: aws-cloudcontrol seed 6529)", async () => {
        const started = await start("aws-cloudcontrol");
        server = started;
        // The create's answer never read: a pending create; its widget is made, then changed outside Pulumi.
        const first = processOf(started, {
            fetch: DIES_WITH_ITS_CREATE_RESOURCE,
        });
        const inputs = await inputsOf(first.provider, started, "w1", 3, { createToken: TOKEN });
        const state = await partialOf(first.provider.create(inputs));
        assert.equal(state.resourceId, undefined);
        await started.settle();
        started.server.mutate("w1", started.fixture.drift(9));
        const { outs } = await processOf(started).provider.update("w1", state, inputs);
        const sizes = started.server.resources().map((record) => started.fixture.sizeOf(record));
        assert.deepEqual(sizes, [3], "the up recorded the program's size while the API kept the drifted one");
        assert.equal(outs?.resourceId, "w1");
    });

    it("X: a destroy whose timeout ends as the create it follows succeeds does not leave what it made (zombies; replay: google seed 7054)", async () => {
        // The create runs until the test lets it end; what it made shows in reads one read after that.
        const create: OperationScript = {
            pollsToFinish: Number.POSITIVE_INFINITY,
            outcome: "succeeded",
            resultLate: true,
        };
        const operations: OperationPlan = { next: (kind) => (kind === "create" ? create : { ...DEFAULT_OPERATION }) };
        const started = await start("google", {}, operations);
        server = started;
        const { provider } = processOf(started);
        const timeouts = { create: "1s", delete: "50ms" };
        const state = await partialOf(provider.create(await inputsOf(provider, started, "w1", 3, { timeouts })));
        assert.equal(state.tainted, true);
        assert.ok(state.operation, "the create's operation is recorded");
        // The destroy's second look at the create sees it succeed, as its timeout comes: no time is left
        // for a second read, and the first does not show the widget yet.
        const destroying = processOf(started, {
            fetch: async (send, request) => {
                const answer = await send();
                if (request.url.includes("/operations/")) create.pollsToFinish = 0;
                return answer;
            },
        });
        const first = await outcome(destroying.provider.delete("w1", state));
        assert.deepEqual(
            first === undefined ? liveNames(started) : [],
            [],
            "the delete said done, and the widget the create made is left: a zombie",
        );
        // The next destroy, with time to read past the lag, deletes it.
        const patient = { ...state, timeouts: { ...timeouts, delete: "1m" } };
        assert.equal(await outcome(processOf(started).provider.delete("w1", patient)), undefined);
        assert.deepEqual(liveNames(started), []);
    });

    it("X2: a destroy whose timeout is shorter than the reads that rule out a lag still ends, run again later (heal; replay: azure seed 8535)", async () => {
        // A create that timed out while its operation ran; the operation then succeeded, and another tool
        // deleted what it made: no read will ever show it.
        const create: OperationScript = { pollsToFinish: Number.POSITIVE_INFINITY, outcome: "succeeded" };
        const operations: OperationPlan = { next: (kind) => (kind === "create" ? create : { ...DEFAULT_OPERATION }) };
        const started = await start("azure", {}, operations);
        server = started;
        const { provider } = processOf(started);
        const timeouts = { create: "1s", delete: "2s" };
        const state = await partialOf(provider.create(await inputsOf(provider, started, "w1", 3, { timeouts })));
        assert.ok(state.operation, "the create's operation is recorded");
        create.pollsToFinish = 0;
        await started.settle();
        for (const record of started.server.resources()) started.server.remove(started.idOf(record));
        await withRecords(async (records) => {
            // 2 s of reads are fewer than the 3.1 s that rule out one that lags: the destroy fails.
            const early = processOf(started, { sentCreates: records });
            assert.ok((await outcome(early.provider.delete("w1", state))) instanceof OperationWaitError);
            // Run again a minute later, the reads since the first look span enough: it ends.
            const later = processOf(started, { sentCreates: records, startsAt: START + 60_000 });
            assert.equal(await outcome(later.provider.delete("w1", state)), undefined);
        });
        assert.deepEqual(liveNames(started), []);
    });

    it("Y: a refresh does not record a Google resource still CREATING, whose create is then canceled (state; replay: google seed 7200)", async () => {
        const operations = scriptedOperations({ kind: "create", pollsToFinish: 3, outcome: "canceled" });
        const started = await start("google", {}, operations);
        server = started;
        const { provider } = processOf(started, { ctrlCOnWait: 1 });
        const inputs = await inputsOf(provider, started, "w1", 3, { createToken: TOKEN });
        const state = await partialOf(provider.create(inputs));
        assert.deepEqual(liveNames(started), ["w1"], "listed while it is being created (AIP-151)");
        const refreshed = await processOf(started).provider.read("w1", state);
        assert.equal(refreshed.props?.resourceId, undefined, "the refresh recorded w1 while it was CREATING");
        // Its create ends canceled, which removes it; the next up resolves the pending create.
        await started.settle();
        assert.deepEqual(liveNames(started), []);
        const next = encode(refreshed.props as unknown as Props) as unknown as AsyncResourceOutputs;
        const { outs } = await processOf(started).provider.update("w1", next, inputs);
        assert.deepEqual(liveNames(started), ["w1"], "the up made w1 anew");
        const [made] = started.server.resources();
        assert.equal(outs?.resourceId, made && started.idOf(made));
    });

    it("Z: a refresh after a destroy killed before it read its DELETE's answer reads past a lagging read (state; replay: azure seed 7280)", async () => {
        // What the delete removes still shows in the first read after its operation ends.
        const operations = scriptedOperations({ kind: "delete", pollsToFinish: 3, resultLate: true });
        const started = await start("azure", {}, operations);
        server = started;
        await withRecords(async (record) => {
            const first = processOf(started, { sentCreates: record });
            const created = await first.provider.create(await inputsOf(first.provider, started, "w1", 3));
            const state = encode(created.outs as unknown as Props) as unknown as AsyncResourceOutputs;
            // Killed as its DELETE is answered: the engine keeps w1, and nothing said how the delete went.
            const killed = processOf(started, {
                sentCreates: record,
                fetch: async (send, request, stop) => {
                    const answer = await send();
                    if (request.method === "DELETE") stop();
                    return answer;
                },
            });
            await outcome(killed.provider.delete("w1", state));
            await started.settle();
            assert.deepEqual(liveNames(started), [], "the delete ran on at the API and removed w1");
            const refreshed = await processOf(started, { sentCreates: record }).provider.read("w1", state);
            assert.equal(
                refreshed.id,
                undefined,
                "the refresh took a lagging read for w1, which the API no longer has",
            );
        });
    });

    it("Z2: a refresh after a destroy killed once its DELETE was answered done, before reading it back, reads past a lagging read (state; replay: generic seed 8484)", async () => {
        // The API answers the DELETE done at once (204); what it removed still shows in the next read.
        const operations = scriptedOperations({ kind: "delete", pollsToFinish: 0, resultLate: true });
        const started = await start("generic", { instantAnswers: "final" }, operations);
        server = started;
        await withRecords(async (record) => {
            const first = processOf(started, { sentCreates: record });
            const created = await first.provider.create(await inputsOf(first.provider, started, "w1", 3));
            const state = encode(created.outs as unknown as Props) as unknown as AsyncResourceOutputs;
            let deleted = false;
            const killed = processOf(started, {
                sentCreates: record,
                fetch: async (send, request, stop) => {
                    if (deleted) {
                        stop();
                        throw new TypeError("fetch failed: the provider process is dead");
                    }
                    deleted = request.method === "DELETE";
                    return send();
                },
            });
            await outcome(killed.provider.delete("w1", state));
            assert.ok(deleted, "the DELETE was answered");
            assert.deepEqual(liveNames(started), [], "the DELETE removed w1");
            const refreshed = await processOf(started, { sentCreates: record }).provider.read("w1", state);
            assert.equal(
                refreshed.id,
                undefined,
                "the refresh took a lagging read for w1, which the API no longer has",
            );
        });
    });

    it("Q: a destroy of a create whose read-back was cut short reads past a lagging read (zombies; replay: azure seed 7867)", async () => {
        // The PUT's operation ends at once; the widget shows in reads one read later.
        const operations = scriptedOperations({ kind: "create", pollsToFinish: 0, resultLate: true });
        const started = await start("azure", {}, operations);
        server = started;
        let put = false;
        const { provider } = processOf(started, {
            fetch: async (send, request, stop) => {
                if (put && request.method === "GET") stop();
                if (request.method === "PUT") put = true;
                return send();
            },
        });
        const state = await partialOf(provider.create(await inputsOf(provider, started, "w1", 3)));
        assert.equal(state.resourceId, undefined);
        assert.deepEqual(liveNames(started), ["w1"]);
        // The program drops it: the destroy's first read lags behind the create and shows nothing.
        const deleted = (await outcome(processOf(started).provider.delete("w1", state))) === undefined;
        assert.deepEqual(
            deleted ? liveNames(started) : [],
            [],
            "the delete read once, saw nothing, and left w1 to no one",
        );
    });

    it("B: a delete Cloud Control ends FAILED NotFound is done (heal; replay: aws-cloudcontrol seed 1)", async () => {
        server = await start("aws-cloudcontrol", { handlerErrors: "event" });
        const { provider } = processOf(server);
        const created = await provider.create(await inputsOf(provider, server, "w1", 3));
        server.server.remove("w1");
        const error = await outcome(provider.delete("w1", encode(created.outs as unknown as Props) as never));
        assert.equal(error, undefined, `nothing to delete, yet the delete fails for ever: ${String(error)}`);
    });

    it("D: ARM's long-running PUT without Azure-AsyncOperation is followed (heal; replay: azure-arm seed 11)", async () => {
        server = await start(
            "azure-arm",
            { putAsyncOperationHeader: false },
            scriptedOperations({ kind: "create", pollsToFinish: 2 }),
        );
        const { provider } = processOf(server);
        const error = await outcome(provider.create(await inputsOf(provider, server, "w1", 3)));
        assert.equal(error, undefined, `every such create fails: ${String(error)}`);
    });

    it("L: a refresh does not take a record in the middle of an operation for drift (state; replay: azure-arm seed 27)", async () => {
        server = await start(
            "azure-arm",
            {},
            scriptedOperations({ kind: "update", outcome: "canceled", resultLate: true }),
        );
        const { provider } = processOf(server);
        const created = await provider.create(await inputsOf(provider, server, "w1", 3));
        const before = encode(created.outs as unknown as Props) as unknown as AsyncResourceOutputs;
        const news = await inputsOf(provider, server, "w1", 5);
        await outcome(provider.update("w1", before, news)); // canceled: the engine keeps `before`
        const refreshed = await provider.read("w1", before);
        const diff = await provider.diff("w1", encode(refreshed.props as unknown as Props) as never, news);
        assert.equal(
            diff.changes,
            true,
            "the program's size 5 is never sent: the refresh recorded it from the canceled update's record",
        );
    });

    it("F: a keyed create whose first request is still under way waits for it (heal; replay: generic seed 16)", async () => {
        server = await start("generic", {}, scriptedOperations({ kind: "create", pollsToFinish: 3 }));
        const first = processOf(server, { fetch: DIES_WITH_ITS_POST });
        const inputs = await inputsOf(first.provider, server, "w1", 3, { createToken: TOKEN });
        await outcome(first.provider.create(inputs));
        const error = await outcome(processOf(server).provider.create(inputs));
        assert.equal(error, undefined, `the replay is refused 409 while the first runs: ${String(error)}`);
        assert.deepEqual(liveNames(server), ["w1"]);
    });

    it("F2: a key the API says is outstanding for longer than six looks is waited out, never followed by a next key (duplicates; replay: generic seed 5383)", async () => {
        const operations = scriptedOperations({ kind: "create", pollsToFinish: 24 });
        const started = await start("generic", { allowDuplicateNames: true }, operations);
        server = started;
        // Each process its own record of creates in flight: the second cannot lean on the first's.
        await withRecords(async (firstRecord, nextRecord) => {
            const first = processOf(started, { sentCreates: firstRecord, fetch: DIES_WITH_ITS_POST });
            const inputs = await inputsOf(first.provider, started, "w1", 3, { createToken: TOKEN });
            await outcome(first.provider.create(inputs));
            const next = processOf(started, { sentCreates: nextRecord });
            const error = await outcome(next.provider.create(inputs));
            assert.equal(error, undefined, String(error));
            await started.settle();
            assert.deepEqual(liveNames(started), ["w1"], "the first request's widget, and no second");
        });
    });

    it("F4: a conflict whose answer was cut, after answers that the key is outstanding, does not give the key up (duplicates; replay: generic seed 7505)", async () => {
        const operations = scriptedOperations({ kind: "create", pollsToFinish: 40 });
        const started = await start("generic", { allowDuplicateNames: true }, operations);
        server = started;
        await withRecords(async (firstRecord, nextRecord) => {
            const first = processOf(started, { sentCreates: firstRecord, fetch: DIES_WITH_ITS_POST });
            const inputs = await inputsOf(first.provider, started, "w1", 3, { createToken: TOKEN });
            await outcome(first.provider.create(inputs));
            // The next create's key is refused as outstanding six times; the seventh refusal's body is cut,
            // so it reads as a bare conflict: one look, not the seventh of the looks that give a key up.
            let creates = 0;
            started.server.setFaults({
                next: (request) =>
                    request.operation === "create" && ++creates === 7 ? { kind: "cut-answer" } : undefined,
            });
            const next = processOf(started, { sentCreates: nextRecord });
            await outcome(next.provider.create(inputs));
            await started.settle();
            assert.equal(started.server.counts().duplicates, 0, "a next key made a second w1");
            assert.deepEqual(liveNames(started), ["w1"]);
        });
    });

    it("F3: a key still outstanding at the create's deadline is a pending create, and no next key is sent (duplicates)", async () => {
        const started = await start("generic", { allowDuplicateNames: true }, heldOperations("create"));
        server = started;
        await withRecords(async (firstRecord, nextRecord) => {
            const first = processOf(started, { sentCreates: firstRecord, fetch: DIES_WITH_ITS_POST });
            const extra = { createToken: TOKEN, timeouts: { create: "1m" } };
            await outcome(first.provider.create(await inputsOf(first.provider, started, "w1", 3, extra)));
            const next = processOf(started, { sentCreates: nextRecord });
            const error = await outcome(next.provider.create(await inputsOf(next.provider, started, "w1", 3, extra)));
            assert.ok(error instanceof PartialStateError, String(error));
            assert.equal(error.properties.tainted, false);
            assert.equal(error.properties.resourceId, undefined);
            assert.match(
                error.message,
                /the API still processes an earlier create request with this resource's key .* at the create's deadline, so its outcome is unknown and no other was sent/,
            );
            const posts = started.server.counts().creates;
            assert.equal(posts, 0, "nothing was made while the first request ran");
        });
    });

    for (const where of ["another machine", "the same user's machine"] as const)
        it(`J: a create token sent earlier with another body, from ${where} (heal; replay: aws-cloudcontrol seed 27)`, async () => {
            const started = await start(
                "aws-cloudcontrol",
                {},
                scriptedOperations({ kind: "create", pollsToFinish: 2 }),
            );
            server = started;
            // The first process's record, and another machine's (which has none).
            await withRecords(async (directory, another) => {
                const first = processOf(started, {
                    sentCreates: directory,
                    fetch: DIES_WITH_ITS_CREATE_RESOURCE,
                });
                const token = { createToken: TOKEN };
                await outcome(first.provider.create(await inputsOf(first.provider, started, "w1", 3, token)));
                await started.settle();
                const { provider } = processOf(started, {
                    sentCreates: where === "another machine" ? another : directory,
                });
                const error = await outcome(provider.create(await inputsOf(provider, started, "w1", 4, token)));
                if (where === "another machine")
                    // Nothing tells it the resource is its own: an error that says what to do, never a raw one.
                    assert.match(
                        String(error),
                        /adopt: true/,
                        `a raw ClientTokenConflictException, every up: ${String(error)}`,
                    );
                else {
                    // The record of the create in flight replays it: its resource, with the program's body.
                    assert.equal(error, undefined, String(error));
                    assert.deepEqual(liveNames(started), ["w1"]);
                }
            });
        });

    it("P: a pending create resumed after the program added a createToken is its own (heal; replay: generic seed 288)", async () => {
        server = await start("generic", {}, scriptedOperations({ kind: "create", pollsToFinish: 3 }));
        const { provider } = processOf(server, { ctrlCOnWait: 1 });
        const state = await partialOf(provider.create(await inputsOf(provider, server, "w1", 3)));
        const next = processOf(server).provider;
        const news = await inputsOf(next, server, "w1", 3, { createToken: TOKEN });
        const error = await outcome(next.update("w1", state, news));
        assert.equal(error, undefined, `its own create is refused as someone else's: ${String(error)}`);
    });

    it("R: an operation the API no longer has does not block every later up (heal; replay: azure-arm seed 182)", async () => {
        server = await start(
            "azure-arm",
            { putAsyncOperationHeader: false },
            scriptedOperations({ kind: "create", pollsToFinish: 4 }),
        );
        const { provider } = processOf(server, { ctrlCOnWait: 1 });
        const inputs = await inputsOf(provider, server, "w1", 3);
        const state = await partialOf(provider.create(inputs));
        server.server.remove("w1");
        const error = await outcome(processOf(server).provider.update("w1", state, inputs));
        assert.equal(error, undefined, `following the create's handle fails for ever: ${String(error)}`);
    });

    it("S: a resumed Azure create is followed to its end, not taken at a lookup's word (state; replay: azure seed 141)", async () => {
        // The create is accepted, its answer (with Operation-Location) lost to Ctrl-C; the widget shows
        // while its create runs, and that create then fails (the server removes it).
        server = await start(
            "azure",
            { failedCreate: "removed" },
            scriptedOperations({ kind: "create", pollsToFinish: 3, outcome: "failed" }),
        );
        const created = server;
        const { provider } = processOf(server, {
            fetch: async (send, request, stop) => {
                const answer = await send();
                if (request.method === "PUT") stop();
                return answer;
            },
        });
        const inputs = await inputsOf(provider, created, "w1", 3);
        const state = await partialOf(provider.create(inputs));
        const resumed = await outcome(processOf(created).provider.update("w1", state, inputs));
        await created.settle();
        const recorded = resumed === undefined && liveNames(created).length === 0;
        assert.equal(
            recorded,
            false,
            "the up recorded w1 as made, and its create then failed: the state names what is not there",
        );
    });
});
