// The reporter of progress lines and warnings: to the engine's Log service, and to stderr, saying why
// once, when that service cannot be used (the SDK's stubs did not load, or the engine refused a line).

import { strict as assert } from "node:assert";
import { engineReporter } from "../../provider/shared/engineLog";
import type { EngineLog } from "../../provider/shared/sdkInternals";

describe("engineReporter", () => {
    it("sends each line to the engine's Log service with its URN, progress ephemeral and warnings lasting", () => {
        const sent: unknown[] = [];
        const log: EngineLog = (request) => sent.push(request);
        const written: string[] = [];
        const report = engineReporter(
            "127.0.0.1:4000",
            () => log,
            (text) => written.push(text),
        );
        report({ message: "RUNNING 33%", urn: "urn:pulumi:dev::p::t::ds19" });
        report({ message: "careful", severity: "warning" });
        assert.deepEqual(sent, [
            { severity: 1, message: "RUNNING 33%", urn: "urn:pulumi:dev::p::t::ds19", ephemeral: true },
            { severity: 2, message: "careful", urn: undefined, ephemeral: false },
        ]);
        assert.deepEqual(written, []);
    });

    it("says once why the Log service cannot be used when its client cannot be built, and sends every line to stderr", () => {
        const written: string[] = [];
        let attempts = 0;
        const report = engineReporter(
            "127.0.0.1:4000",
            () => {
                attempts++;
                throw new Error("Cannot find module '@pulumi/pulumi/proto/engine_grpc_pb'");
            },
            (text) => written.push(text),
        );
        report({ message: "first" });
        report({ message: "second" });
        assert.equal(attempts, 1, "a client that cannot be built is not tried again for every line");
        assert.equal(written.length, 3);
        assert.match(
            written[0] as string,
            /^pulumi-lifecycle: the engine's Log service at 127\.0\.0\.1:4000 cannot be used \(Cannot find module '@pulumi\/pulumi\/proto\/engine_grpc_pb'\); progress lines and warnings go to this process's stderr, which the engine shows only with `--logtostderr -v=9`\n$/,
        );
        assert.deepEqual(written.slice(1), ["first\n", "second\n"]);
    });

    it("says once why when the engine refuses a line, and sends that line and the later ones to stderr", () => {
        const written: string[] = [];
        const log: EngineLog = (_request, _deadline, done) =>
            done(new Error("14 UNAVAILABLE: No connection established"));
        const report = engineReporter(
            "127.0.0.1:4000",
            () => log,
            (text) => written.push(text),
        );
        report({ message: "first" });
        report({ message: "second" });
        assert.equal(written.filter((text) => text.includes("cannot be used (14 UNAVAILABLE")).length, 1);
        assert.deepEqual(written.slice(1), ["first\n", "second\n"]);
    });

    it("writes to stderr, without a warning, when the process has no engine address", () => {
        const written: string[] = [];
        const report = engineReporter(
            undefined,
            () => assert.fail("no client without an address"),
            (text) => written.push(text),
        );
        report({ message: "alone" });
        assert.deepEqual(written, ["alone\n"]);
    });
});
