// AWS Signature Version 4 for APIs that take it (Cloud Control), by the signer the AWS SDK for
// JavaScript v3 itself uses (@smithy/signature-v4 with @aws-crypto/sha256-js): nothing of the algorithm
// is written here. The signing date is the wall clock, not the client's injectable one: AWS compares it
// with its own clock (15 minutes either way).

import { Sha256 } from "@aws-crypto/sha256-js";
import { SignatureV4 } from "@smithy/signature-v4";

/** AWS credentials, from the provider process's environment; never in inputs, state or messages. */
export interface AwsCredentials {
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
    readonly sessionToken?: string;
}

/** A request about to be sent: its headers are signed and returned with the signature added. */
export interface RequestToSign {
    readonly method: string;
    readonly url: URL;
    readonly headers: Readonly<Record<string, string>>;
    readonly body: string | undefined;
}

/** Signs a request: the headers to send (the given ones, the signature's and the date's). */
export type RequestSigner = (request: RequestToSign) => Promise<Record<string, string>>;

/** A SigV4 signer for `service` in `region`. */
export function sigV4Signer(options: { region: string; service: string; credentials: AwsCredentials }): RequestSigner {
    const signer = new SignatureV4({
        credentials: options.credentials,
        region: options.region,
        service: options.service,
        sha256: Sha256,
    });
    return async (request) => {
        const query: Record<string, string> = {};
        for (const [name, value] of request.url.searchParams) query[name] = value;
        const signed = await signer.sign(
            {
                method: request.method,
                protocol: request.url.protocol,
                hostname: request.url.hostname,
                ...(request.url.port ? { port: Number(request.url.port) } : {}),
                path: request.url.pathname,
                query,
                headers: { ...request.headers, host: request.url.host },
                ...(request.body === undefined ? {} : { body: request.body }),
            },
            { signingDate: new Date() },
        );
        const headers: Record<string, string> = {};
        // fetch sets Host itself, from the URL it was signed for.
        for (const [name, value] of Object.entries(signed.headers))
            if (name.toLowerCase() !== "host") headers[name] = String(value);
        return headers;
    };
}

/** The credentials in the standard AWS environment variables; undefined when the key pair is not there. */
export function awsCredentialsFrom(env: NodeJS.ProcessEnv): AwsCredentials | undefined {
    const accessKeyId = env.AWS_ACCESS_KEY_ID;
    const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
    if (!accessKeyId || !secretAccessKey) return undefined;
    return { accessKeyId, secretAccessKey, ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}) };
}
