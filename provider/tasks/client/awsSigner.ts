// AWS Signature Version 4 for APIs that take it (Cloud Control), by `aws4`, the small, dependency-free
// signer much of the Node ecosystem uses: nothing of the algorithm is written here. (The tests' Cloud
// Control server verifies with @smithy/signature-v4, the AWS SDK's own: two implementations that must
// agree.) The signing date is the wall clock, not the client's injectable one: AWS compares it with its
// own clock (15 minutes either way).

import aws4 = require("aws4");
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
    return async (request) => {
        const signed = aws4.sign(
            {
                host: request.url.host,
                path: `${request.url.pathname}${request.url.search}`,
                method: request.method,
                headers: { ...request.headers },
                ...(request.body === undefined ? {} : { body: request.body }),
                service: options.service,
                region: options.region,
            },
            options.credentials,
        );
        const headers: Record<string, string> = {};
        // fetch sets Host and Content-Length itself, to the values signed (the URL's host, the body's length).
        for (const [name, value] of Object.entries(signed.headers ?? {})) {
            const lower = name.toLowerCase();
            if (lower !== "host" && lower !== "content-length") headers[lower] = String(value);
        }
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
