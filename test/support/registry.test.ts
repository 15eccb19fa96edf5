// Guards where the CA bundle goes (registry.ts): the processes the tests start run without
// NODE_EXTRA_CA_CERTS, and a package manager's run gets it back, so that a registry behind a proxy that
// inspects TLS still answers.

import { strict as assert } from "node:assert";
import { keepCaCertsForTheRegistry, registryEnv } from "./registry";

describe("the CA bundle, for the package managers only", () => {
    it("is not in the environment the test processes start their processes with", () => {
        assert.equal(process.env.NODE_EXTRA_CA_CERTS, undefined);
    });

    it("goes back into a package manager's environment, once taken out", () => {
        const env: NodeJS.ProcessEnv = { NODE_EXTRA_CA_CERTS: "/etc/ssl/proxy.pem", PATH: "/bin" };
        keepCaCertsForTheRegistry(env);
        assert.equal(env.NODE_EXTRA_CA_CERTS, undefined);
        assert.deepEqual(
            { ...registryEnv(env), PL_TEST_REGISTRY_CA_CERTS: undefined },
            { NODE_EXTRA_CA_CERTS: "/etc/ssl/proxy.pem", PATH: "/bin", PL_TEST_REGISTRY_CA_CERTS: undefined },
        );
        // Taken out again (a test process that inherited the kept value): nothing is lost.
        keepCaCertsForTheRegistry(env);
        assert.equal(registryEnv(env).NODE_EXTRA_CA_CERTS, "/etc/ssl/proxy.pem");
    });

    it("stays out of a package manager's environment where the machine named none", () => {
        const env: NodeJS.ProcessEnv = { PATH: "/bin" };
        keepCaCertsForTheRegistry(env);
        assert.deepEqual(registryEnv(env), { PATH: "/bin" });
    });
});
