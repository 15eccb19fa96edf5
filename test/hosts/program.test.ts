// Guards how a Pulumi program wires `hosts.HostEntry` (under pulumi.runtime.setMocks, no engine): the
// type token, the inputs sent (file defaulted from stack config, then HOSTS_FILE, then the OS file), the
// typed outputs, `HostEntry.get` as a read of an existing entry by id, and a usable `__provider`.

import { strict as assert } from "node:assert";
import * as pulumi from "@pulumi/pulumi";
import { hosts } from "../../provider";
import { osHostsFile } from "../../provider/hosts/logic/defaultFile";
import { providerText } from "../../provider/shared/providerShim";

interface Registered {
    type: string;
    name: string;
    inputs: Record<string, unknown>;
    id: string | undefined;
}

function resolved<T>(output: pulumi.Output<T>): Promise<T> {
    return new Promise((resolve) => output.apply(resolve));
}

describe("HostEntry in a program", () => {
    let registered: Registered[];
    const savedHostsFile = process.env.HOSTS_FILE;

    beforeEach(async () => {
        registered = [];
        delete process.env.HOSTS_FILE;
        pulumi.runtime.setAllConfig({});
        await pulumi.runtime.setMocks(
            {
                newResource: (args) => {
                    registered.push({
                        type: args.type,
                        name: args.name,
                        inputs: args.inputs,
                        id: args.id || undefined,
                    });
                    // A new resource arrives with id "" (an empty id would read as unknown): make one up.
                    const id = args.id || `ipv4/${(args.inputs.names as string[] | undefined)?.[0]}`;
                    return { id, state: { ...args.inputs, adopt: args.inputs.adopt ?? false, line: 7 } };
                },
                call: () => ({}),
            },
            "hosts-program",
            "dev",
            false,
            "acme",
        );
    });
    after(() => {
        if (savedHostsFile === undefined) delete process.env.HOSTS_FILE;
        else process.env.HOSTS_FILE = savedHostsFile;
        pulumi.runtime.setAllConfig({});
    });

    it("registers pulumi-nodejs:dynamic/hosts:HostEntry with its inputs and typed outputs", async () => {
        const web = new hosts.HostEntry("web", {
            address: "10.0.0.5",
            names: ["web.internal", "web"],
            comment: "frontend",
            file: "./hosts",
        });
        assert.equal(await resolved(web.line), 7);
        assert.deepEqual(await resolved(web.names), ["web.internal", "web"]);
        assert.equal(await resolved(web.id), "ipv4/web.internal");
        const [resource] = registered;
        assert.equal(resource?.type, "pulumi-nodejs:dynamic/hosts:HostEntry");
        assert.equal(resource?.name, "web");
        const { __provider, ...inputs } = resource?.inputs ?? {};
        assert.deepEqual(inputs, {
            address: "10.0.0.5",
            names: ["web.internal", "web"],
            comment: "frontend",
            file: "./hosts",
            // The stack, with which the provider tells this stack's interrupted creates from others'.
            __owner: "acme/hosts-program/dev",
        });
        assert.equal(typeof __provider, "string");
    });

    it("defaults the file to stack config pulumi-lifecycle:hostsFile first", async () => {
        process.env.HOSTS_FILE = "/from/env";
        pulumi.runtime.setAllConfig({ "pulumi-lifecycle:hostsFile": "/from/config" });
        const entry = new hosts.HostEntry("a", { address: "10.0.0.1", names: ["a.test"] });
        assert.equal(await resolved(entry.file), "/from/config");
    });

    it("then to the HOSTS_FILE environment variable", async () => {
        process.env.HOSTS_FILE = "/from/env";
        const entry = new hosts.HostEntry("b", { address: "10.0.0.2", names: ["b.test"] });
        assert.equal(await resolved(entry.file), "/from/env");
    });

    it("then to the operating system's hosts file", async () => {
        const entry = new hosts.HostEntry("c", { address: "10.0.0.3", names: ["c.test"] });
        assert.equal(await resolved(entry.file), osHostsFile());
        assert.equal(osHostsFile({}, "linux"), "/etc/hosts");
        assert.equal(osHostsFile({}, "win32"), "C:\\Windows\\System32\\drivers\\etc\\hosts");
        assert.equal(osHostsFile({ SystemRoot: "D:\\Windows" }, "win32"), "D:\\Windows\\System32\\drivers\\etc\\hosts");
    });

    it("reads an existing entry with HostEntry.get(name, id, {file})", async () => {
        const existing = hosts.HostEntry.get("existing", "ipv6/localhost", { file: "/some/hosts" });
        assert.equal(await resolved(existing.id), "ipv6/localhost");
        const [resource] = registered;
        assert.equal(resource?.id, "ipv6/localhost");
        assert.equal(resource?.inputs.file, "/some/hosts");
        assert.equal(resource?.type, "pulumi-nodejs:dynamic/hosts:HostEntry");
    });

    it("records the shim's fixed __provider text, which loads into a provider with every operation", async () => {
        const entry = new hosts.HostEntry("d", { address: "10.0.0.4", names: ["d.test"] });
        await resolved(entry.id);
        const text = registered[0]?.inputs.__provider as string;
        assert.equal(text, providerText("pulumi-lifecycle/provider/hostEntry"));
        const provider = require("require-from-string")(text).handler();
        for (const method of ["configure", "check", "diff", "create", "read", "update", "delete"]) {
            assert.equal(typeof provider[method], "function", method);
        }
    });
});
