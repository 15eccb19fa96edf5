// The chaos suite's own checks, checked: an invariant that cannot fail proves nothing, and one that
// fails on the API's own routes would bury every real finding.

import { strict as assert } from "node:assert";
import { newDatastoreRecord } from "../../provider/taskApiServer/datastoreRecord";
import { CrossOriginError } from "../../provider/tasks/errors/crossOriginError";
import { ResourceExistsError } from "../../provider/tasks/errors/resourceExistsError";
import { ASYNC_OPERATIONS_PATH, DATASTORES_PATH, type DatastoreRecord } from "../../provider/tasks/protocol/wire";
import type { StateEntry } from "./engine";
import { errorProblems, finalStateChecks, namesDatastore, requestProblem, secretsIn, targetId } from "./invariants";

const ID = "0f3c5a8e-1b2d-4c6e-8f90-a1b2c3d4e5f6";
const KEY = {
    hciClusterUuid: "0c4a05e1-0000-4000-8000-00000000c4a0",
    clusterId: "5eed0001-0000-4000-8000-000000000001",
    name: "alpha",
};

/** What the Datastore's existsDetail says of a record (logic/datastoreSpec.ts). */
function detailOf(found: DatastoreRecord): string {
    return `${found.state}, ${found.capacityInBytes} bytes ${found.datastoreType}`;
}

function record(name: string, clusterId: string, id = ID): DatastoreRecord {
    return {
        ...newDatastoreRecord({
            id,
            name,
            storageSystemId: KEY.hciClusterUuid,
            targetHypervisorClusterId: clusterId,
            sizeInBytes: 2 ** 30,
            datastoreType: "VMFS",
            at: "2030-01-01T00:00:00.000Z",
        }),
        state: "OK",
    };
}

describe("chaos suite: the invariants' own checks", () => {
    it("accepts every route of the API as the client sends it", () => {
        const filter = encodeURIComponent(`hciClusterUuid eq '${KEY.hciClusterUuid}' and name eq 'alpha'`);
        for (const [method, url] of [
            ["GET", `${DATASTORES_PATH}?filter=${filter}`],
            ["GET", DATASTORES_PATH],
            ["POST", DATASTORES_PATH],
            ["GET", `${DATASTORES_PATH}/${ID}`],
            ["PATCH", `${DATASTORES_PATH}/${ID}`],
            ["DELETE", `${DATASTORES_PATH}/${encodeURIComponent("an id with spaces")}`],
            ["GET", `${ASYNC_OPERATIONS_PATH}/${ID}`],
        ] as const) {
            assert.equal(requestProblem(method, url), undefined, `${method} ${url}`);
        }
    });

    it("refuses what the attacks made the provider send", () => {
        const refused: [string, string][] = [
            ["DELETE", "/virtualization/admin/users/1"],
            ["DELETE", `${DATASTORES_PATH}/D1?force=true&cascade=all`],
            ["GET", `${DATASTORES_PATH}/`],
            ["GET", `${DATASTORES_PATH}/%2e%2e%2f%2e%2e%2fadmin%2fusers%2f1`],
            ["GET", `${DATASTORES_PATH}/a%2Fb`],
            ["GET", `${DATASTORES_PATH}/${ID}/extra`],
            ["GET", `${DATASTORES_PATH}?filter=x&force=true`],
            ["POST", `${DATASTORES_PATH}?dryRun=false`],
            ["PUT", `${DATASTORES_PATH}/${ID}`],
            ["GET", `${ASYNC_OPERATIONS_PATH}/${ID}?cascade=all`],
            ["GET", "/moved/virtualization/v1beta1/datastores"],
        ];
        for (const [method, url] of refused)
            assert.notEqual(requestProblem(method, url), undefined, `${method} ${url}`);
    });

    it("reads the target of a DELETE or PATCH decoded and lowercase", () => {
        assert.equal(targetId(`${DATASTORES_PATH}/${ID.toUpperCase()}`), ID);
        assert.equal(targetId(`${DATASTORES_PATH}/${encodeURIComponent("../x")}`), "../x");
        assert.equal(targetId(`${ASYNC_OPERATIONS_PATH}/${ID}`), undefined);
    });

    it("finds secrets, and tells a message that names the datastore from one that does not", () => {
        assert.deepEqual(secretsIn("Bearer tok-1 and pw-2", { token: "tok-1", password: "pw-2", other: "x-3" }), [
            "token",
            "password",
        ]);
        assert.ok(namesDatastore('datastore "alpha" (cluster c, HCI cluster h): gone', "alpha"));
        assert.ok(namesDatastore("task t (Create datastore alpha) failed", "alpha"));
        assert.ok(!namesDatastore("GET /datastores?filter=name%20eq%20'alpha' answered 500", "alpha"));
        assert.ok(!namesDatastore("datastore alphabet", "alpha"));
    });

    it("flags a foreign error class, a nameless message, a secret, and a refusal naming another datastore", () => {
        const secrets = { token: "tok-SECRET" };
        assert.deepEqual(
            errorProblems(new RangeError("Maximum call stack size exceeded"), KEY, secrets, []).map(
                (p) => p.split(":")[0],
            ),
            ["threw RangeError, not a LifecycleError", 'the message does not name datastore "alpha"'],
        );
        const leak = new CrossOriginError('http://u:tok-SECRET@h/x for datastore "alpha"', "http://h");
        assert.deepEqual(errorProblems(leak, KEY, secrets, []), ["the message carries the token"]);
        const theirs = record("zulu", "5eed0002-0000-4000-8000-000000000002");
        const exists = new ResourceExistsError('datastore "alpha"', theirs.id, false, detailOf(theirs));
        assert.match(errorProblems(exists, KEY, secrets, [theirs]).join(), /names .* \(zulu in cluster 5eed0002/);
        const ours = record("alpha", KEY.clusterId);
        assert.deepEqual(
            errorProblems(new ResourceExistsError('datastore "alpha"', ours.id, true, detailOf(ours)), KEY, secrets, [
                ours,
            ]),
            [],
        );
    });

    describe("the final state (invariant 4)", () => {
        const OTHER = "0f3c5a8e-1b2d-4c6e-8f90-000000000002";
        const resource = {
            urn: "urn:alpha",
            key: KEY,
            sizeInBytes: 2 ** 30,
            adopt: false,
            untaint: false,
            label: "alpha",
        };
        const entry = (outputs: Record<string, unknown>): StateEntry => ({
            urn: "urn:alpha",
            id: "natural/key/alpha",
            key: KEY,
            inputs: {},
            outputs: { tainted: false, sizeInBytes: 2 ** 30, datastoreId: ID, ...outputs },
            initErrors: [],
        });
        const failing = (input: Parameters<typeof finalStateChecks>[0]) =>
            finalStateChecks(input)
                .filter((check) => !check.holds)
                .map((check) => check.detail());

        it("holds for one resource recording its own healthy datastore", () => {
            const truth = [record("alpha", KEY.clusterId)];
            assert.deepEqual(
                failing({ program: [resource], state: [entry({})], truth, foreign: new Set(), healed: true }),
                [],
            );
        });

        it("finds a zombie, a duplicate, a taint, a datastore in ERROR and a size that differs", () => {
            const ours = { ...record("alpha", KEY.clusterId), state: "ERROR" as const, capacityInBytes: 2 ** 31 };
            const zombie = record("alpha", "5eed0002-0000-4000-8000-000000000002", OTHER);
            const twin = { ...entry({}), urn: "urn:twin", key: { ...KEY, name: "twin" } };
            const problems = failing({
                program: [resource],
                state: [entry({ tainted: true, taintReason: "task failed" }), twin],
                truth: [ours, zombie],
                foreign: new Set(),
                healed: true,
            });
            for (const expected of [
                /twin is in state but not in the program/,
                /is tainted: task failed/,
                /ERROR at the API/,
                /the API has 2147483648 bytes/,
                /recorded by alpha and twin/,
                /zombie: alpha in 5eed0002/,
            ]) {
                assert.ok(
                    problems.some((problem) => expected.test(problem)),
                    `${expected} in ${problems.join("\n")}`,
                );
            }
        });

        it("leaves someone else's datastores out of the zombie count, and judges only zombies and twins when healing failed", () => {
            const theirs = record("zulu", KEY.clusterId, OTHER);
            assert.deepEqual(
                failing({ program: [resource], state: [], truth: [theirs], foreign: new Set([OTHER]), healed: false }),
                [],
            );
            assert.deepEqual(
                failing({ program: [resource], state: [], truth: [theirs], foreign: new Set(), healed: false }).length,
                1,
            );
        });
    });
});
