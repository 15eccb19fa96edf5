// Guards the record of keyed creates in flight (provider/tasks/io/sentCreates.ts): a create whose
// provider process was killed, then created again by the next `up` with a changed body, is followed to
// its end, never made a second time (dialect chaos seed generic 5001: the API refused the old key with
// the new body as reused (422) and the create moved on to the next key; the first create ended later as
// a duplicate). The record itself: sealed with the createToken, removed once the outcome is known.
// The generic dialect's server, written from its contract, accepting two widgets with one name.

import { strict as assert } from "node:assert";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AsyncResourceOutputs } from "../../../provider/tasks/asyncResourceSchema";
import { type CreateScope, SENT_CREATES_DIR_ENV, sentCreatesIn } from "../../../provider/tasks/io/sentCreates";
import { type GenericServer, startGenericServer } from "../../dialects/servers/generic";
import { heldOperations, scriptedOperations } from "../../dialects/servers/kit";
import {
    checked,
    FAKE_EPOCH,
    type FakeProcessOptions,
    FIXTURES,
    processOnFakeTime,
    WIDGETS_TOKEN,
} from "../asyncResource/dialectFixtures";

const SCOPE: CreateScope = {
    apiUrl: "https://api.example",
    collection: "/widgets",
    naturalKey: "w1",
    createToken: "token-8f1c",
};

describe("the record of keyed creates in flight", () => {
    let directory: string;
    beforeEach(() => {
        directory = mkdtempSync(join(tmpdir(), "sent-creates-"));
    });
    afterEach(() => rmSync(directory, { recursive: true, force: true }));

    describe("as files", () => {
        const reports: string[] = [];
        const sent = () => sentCreatesIn({ [SENT_CREATES_DIR_ENV]: directory }, (line) => reports.push(line));

        it("answers what was recorded, to this resource's createToken only, until it is ended", async () => {
            const body = { name: "w1", password: "hunter2-secret" };
            await sent().sending(SCOPE, { key: "token-8f1c", body });
            assert.deepEqual(await sent().unended(SCOPE), { key: "token-8f1c", body });
            assert.equal(await sent().unended({ ...SCOPE, createToken: "another" }), undefined);
            assert.equal(await sent().unended({ ...SCOPE, naturalKey: "w2" }), undefined);
            await sent().ended(SCOPE);
            assert.equal(await sent().unended(SCOPE), undefined);
            assert.deepEqual(reports, []);
        });

        it("keeps the body and the key sealed, in a file only this user may read", async () => {
            await sent().sending(SCOPE, { key: "token-8f1c", body: { name: "w1", password: "hunter2-secret" } });
            const [file, ...others] = readdirSync(directory);
            assert.deepEqual(others, []);
            const text = readFileSync(join(directory, file as string), "utf8");
            for (const clear of ["hunter2-secret", "token-8f1c", "password"]) assert.ok(!text.includes(clear), clear);
            assert.equal(statSync(join(directory, file as string)).mode & 0o777, 0o600);
        });

        it("takes a damaged record for none, and a directory it cannot write for a warning, never a failure", async () => {
            await sent().sending(SCOPE, { key: "k", body: {} });
            const [file] = readdirSync(directory);
            writeFileSync(join(directory, file as string), '{"format":1,"sealed":"AAAA"}');
            assert.equal(await sent().unended(SCOPE), undefined);
            const blocked = join(directory, "not-a-directory");
            writeFileSync(blocked, "");
            const lines: string[] = [];
            const nowhere = sentCreatesIn({ [SENT_CREATES_DIR_ENV]: blocked }, (line) => lines.push(line));
            await nowhere.sending(SCOPE, { key: "k", body: {} });
            assert.match(
                lines[0] ?? "",
                /^could not write the record of a create in flight \(E\w+\); going on without it$/,
            );
        });
    });

    describe("through the provider, against the generic dialect's server", () => {
        let server: GenericServer;
        afterEach(() => server?.close());

        it("a create killed mid-operation, created again with another body, follows the first: one widget, the new body", async () => {
            const held = heldOperations("create");
            server = await startGenericServer({
                token: WIDGETS_TOKEN,
                retryAfterSeconds: 0,
                allowDuplicateNames: true,
                operations: held,
            });
            const fixture = FIXTURES.find((entry) => entry.dialect === "generic");
            assert.ok(fixture);
            const args = (size: number) => ({ ...fixture.args(server.url, "w1", size), createToken: "token-8f1c" });
            // The first process is killed while it follows its create: the engine hears nothing.
            const killed = processOf(directory, {
                onWait: () => killed.controller.abort(new Error("killed (SIGKILL)")),
            });
            await killed.provider.create(await checked(killed.provider, args(3))).catch(() => undefined);
            assert.equal(server.resources().length, 0);
            assert.equal(readdirSync(directory).length, 1);
            // That create ends later; the next up creates the resource again, with the program's new size.
            held.release();
            const next = processOf(directory);
            const { outs } = await next.provider.create(await checked(next.provider, args(8)));
            const widgets = server.resources();
            assert.equal(widgets.length, 1, JSON.stringify(widgets));
            assert.equal(widgets[0]?.size, 8);
            assert.equal(outs?.resourceId, widgets[0]?.id);
            assert.equal(server.counts().duplicates, 0);
            assert.equal(server.counts().creates, 1);
            // Nothing is left running that could end later as a second widget.
            assert.deepEqual(
                server.operations().filter((operation) => operation.status === "pending"),
                [],
            );
            assert.deepEqual(readdirSync(directory), []);
            assert.ok(
                next.reports.some((line) =>
                    /following an earlier create .* whose process did not see it end/.test(line),
                ),
            );
        });

        it("a create killed once its operation ended, before it read what that made, is followed by the next, whose body changed: no second widget", async () => {
            server = await startGenericServer({
                token: WIDGETS_TOKEN,
                retryAfterSeconds: 0,
                allowDuplicateNames: true,
                // The widget shows in reads only one read after its operation said it succeeded.
                operations: scriptedOperations({ kind: "create", pollsToFinish: 1, resultLate: true }),
            });
            const fixture = FIXTURES.find((entry) => entry.dialect === "generic");
            assert.ok(fixture);
            const args = { ...fixture.args(server.url, "w1", 3), createToken: "token-8f1c" };
            // Killed as it reads the widget its operation made (an item's path; the lookup is a list's).
            const killed = processOf(directory, {
                killAt: (method, url) => method === "GET" && url.includes("/widgets/"),
            });
            await killed.provider.create(await checked(killed.provider, args)).catch(() => undefined);
            assert.equal(server.counts().creates, 1);
            // The next up, with the program's size changed: the old key with the new body is refused (422).
            const next = processOf(directory);
            const changed = { ...fixture.args(server.url, "w1", 8), createToken: "token-8f1c" };
            const { outs } = await next.provider.create(await checked(next.provider, changed));
            const widgets = server.resources();
            assert.equal(widgets.length, 1, JSON.stringify(widgets));
            assert.equal(widgets[0]?.size, 8);
            assert.equal(outs?.resourceId, widgets[0]?.id);
            assert.equal(server.counts().duplicates, 0);
        });

        it("a delete killed while its operation runs is followed by the next refresh, which reads the resource gone", async () => {
            server = await startGenericServer({
                token: WIDGETS_TOKEN,
                retryAfterSeconds: 0,
                // The widget still shows in the first read after its delete ended.
                operations: scriptedOperations({ kind: "delete", pollsToFinish: 3, resultLate: true }),
            });
            const fixture = FIXTURES.find((entry) => entry.dialect === "generic");
            assert.ok(fixture);
            const first = processOf(directory);
            const created = await first.provider.create(
                await checked(first.provider, fixture.args(server.url, "w1", 3)),
            );
            const outs = created.outs as AsyncResourceOutputs;
            // Killed as it looks at its delete's operation the second time: the engine keeps the resource.
            let looks = 0;
            const killed = processOf(directory, {
                killAt: (method, url) => method === "GET" && url.includes("/monitors/") && ++looks === 2,
            });
            await killed.provider.delete("w1", outs).catch(() => undefined);
            assert.equal(server.resources().length, 1);
            // The operation runs on at the API; the next refresh follows it to its end before it answers.
            const next = processOf(directory);
            const read = await next.provider.read("w1", outs);
            assert.equal(read.id, undefined, JSON.stringify(read));
            assert.deepEqual(server.resources(), []);
            assert.deepEqual(readdirSync(directory), []);
        });

        it("a destroy of a pending create that cannot walk its spent keys within timeouts.delete goes on from where the last stopped (generic seed 5756)", async () => {
            server = await startGenericServer({
                token: WIDGETS_TOKEN,
                retryAfterSeconds: 0,
                allowDuplicateNames: true,
                // The first two keys' creates end canceled and failed at once; the third makes a widget.
                operations: scriptedOperations(
                    { kind: "create", pollsToFinish: 0, outcome: "canceled" },
                    { kind: "create", pollsToFinish: 0, outcome: "failed" },
                    { kind: "create", pollsToFinish: 0, outcome: "succeeded" },
                ),
            });
            const fixture = FIXTURES.find((entry) => entry.dialect === "generic");
            assert.ok(fixture);
            const args = {
                ...fixture.args(server.url, "w1", 3),
                createToken: "token-5756",
                timeouts: { delete: "2s" },
            };
            // A create whose outcome is unknown (nothing in state but its inputs): a pending create.
            const first = processOf(directory);
            const { __provider: _, ...settings } = (await checked(first.provider, args)) as unknown as Record<
                string,
                unknown
            >;
            const pending = { ...settings, tainted: false } as unknown as AsyncResourceOutputs;
            // The first destroy spends two keys, makes the widget with the third and deletes it; its
            // process is killed before the engine hears, so the stack keeps the pending create.
            await first.provider.delete("w1", pending);
            assert.deepEqual(server.resources(), []);
            assert.equal(server.counts().creates, 1);
            // The next reads the third key's widget as gone, but 2 s are too few to rule out a read that lags.
            const second = processOf(directory);
            await assert.rejects(second.provider.delete("w1", pending), { name: "CreateTokenSpentError" });
            assert.equal(server.counts().creates, 1);
            // Ten minutes later the widget is still gone: the destroy goes on with the next key, and ends.
            const third = processOf(directory, { startsAt: FAKE_EPOCH + 10 * 60_000 });
            await third.provider.delete("w1", pending);
            assert.deepEqual(server.resources(), []);
            assert.equal(server.counts().creates, 2);
            assert.equal(server.counts().duplicates, 0);
            assert.ok(
                third.reports.some((line) => /the first 2 keys of its createToken were spent earlier/.test(line)),
            );
        });
    });
});

/** A provider process on fake time (processOnFakeTime) that keeps its record of writes in flight in `directory`. */
function processOf(directory: string, options: Omit<FakeProcessOptions, "env"> = {}) {
    return processOnFakeTime({ ...options, env: { [SENT_CREATES_DIR_ENV]: directory } });
}
