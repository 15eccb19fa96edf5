// The processes the tests start run without NODE_EXTRA_CA_CERTS, as the tests' CLI already does (`cliEnv`
// in pulumiCli.ts), except the package managers, which reach the registry. Node.js parses that bundle as
// every process starts, whether or not it opens a TLS connection (0.08 CPU-s of each process here, where
// the environment names the system bundle; 0.03 without it), and the providers, writers, servers and
// command lines the tests start talk to local servers only: about 40 of the quick loop's 200 CPU-s.
// Loaded by every test command (.mocharc.json), before any test starts a process, it takes the variable
// out of this process's environment and keeps its value for `registryEnv`, which every run of npm, pnpm
// or yarn uses: a registry behind a proxy that inspects TLS still answers them.

/** Where the bundle is kept (inherited by the test processes Mocha starts). */
const KEPT = "PL_TEST_REGISTRY_CA_CERTS";

/** Takes NODE_EXTRA_CA_CERTS out of `env`, keeping its value for `registryEnv`. */
export function keepCaCertsForTheRegistry(env: NodeJS.ProcessEnv): void {
    if (!env.NODE_EXTRA_CA_CERTS) return;
    env[KEPT] ??= env.NODE_EXTRA_CA_CERTS;
    delete env.NODE_EXTRA_CA_CERTS;
}

/** The environment for a package manager's run: `env`, with the CA bundle the registry may need. */
export function registryEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
    const bundle = env[KEPT];
    return bundle ? { ...env, NODE_EXTRA_CA_CERTS: bundle } : { ...env };
}

keepCaCertsForTheRegistry(process.env);
