// AWS Signature Version 4 for the Cloud Control test server and its tests: the server checks what a
// client signed, the tests sign with the same well-kept library the AWS SDK for JavaScript v3 uses
// (@smithy/signature-v4 with @aws-crypto/sha256-js), so nothing here implements the algorithm itself.
//
// The contract read: botocore `botocore/data/cloudcontrol/2021-09-30/service-2.json` metadata
// (signatureVersion v4, signingName cloudcontrolapi); the AWS SigV4 rules (the Authorization header
// `AWS4-HMAC-SHA256 Credential=<key>/<yyyymmdd>/<region>/<service>/aws4_request, SignedHeaders=..,
// Signature=..`, `host` and every `x-amz-*` header signed, a request more than 15 minutes from the
// server's clock refused). The service file is silent on the errors of a bad signature: these follow
// AWS's "Common Errors" pages (IncompleteSignature 400, MissingAuthenticationToken 403, an unknown
// access key 403), with the JSON-protocol spellings.
//
// Test infrastructure only: nothing here ships in the package.

import { createHash, timingSafeEqual } from "node:crypto";
import { Sha256 } from "@aws-crypto/sha256-js";
import { SignatureV4 } from "@smithy/signature-v4";

/** Fixed credentials of the test server (never real ones). */
export interface TestCredentials {
    accessKeyId: string;
    secretAccessKey: string;
    /** When set, requests must carry it as X-Amz-Security-Token; when unset, they must not carry one. */
    sessionToken?: string;
}

export const TEST_CREDENTIALS: Readonly<TestCredentials> = {
    accessKeyId: "AKIDTESTCLOUDCONTROL0",
    secretAccessKey: "test/secret/for/the/cloud/control/server0",
};
export const TEST_REGION = "us-east-1";
export const TEST_SERVICE = "cloudcontrolapi";
/** How far X-Amz-Date may be from the server's clock, either way (AWS: 15 minutes). */
export const MAX_SKEW_MS = 15 * 60 * 1000;

/** What the verifier needs of a request: the kit's KitRequest has all of it. */
export interface SignedRequest {
    method: string;
    path: string;
    query: URLSearchParams;
    headers: Record<string, string | string[] | undefined>;
    rawBody: string;
}

export interface VerifyOptions {
    credentials: TestCredentials;
    region: string;
    service: string;
    /** The server's clock, in ms. */
    now: () => number;
}

/** Why a request's credentials were refused, as the JSON protocol renders it. */
export interface SigV4Failure {
    type:
        | "MissingAuthenticationTokenException"
        | "IncompleteSignatureException"
        | "UnrecognizedClientException"
        | "InvalidSignatureException";
    status: 400 | 403;
    message: string;
}

interface ParsedAuthorization {
    accessKeyId: string;
    date: string;
    region: string;
    service: string;
    signedHeaders: string[];
    signature: string;
}

const AUTHORIZATION =
    /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;_.-]+),\s*Signature=([0-9a-f]{64})$/;
const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

function header(request: SignedRequest, name: string): string | undefined {
    const value = request.headers[name];
    return Array.isArray(value) ? value.join(",") : value;
}

function incomplete(message: string): SigV4Failure {
    return { type: "IncompleteSignatureException", status: 400, message };
}

function parseAmzDate(value: string): number | undefined {
    const match = AMZ_DATE.exec(value);
    if (match === null) return undefined;
    const [, year, month, day, hour, minute, second] = match.map(Number) as number[];
    return Date.UTC(year ?? 0, (month ?? 1) - 1, day, hour, minute, second);
}

/**
 * The checks that need no signature computation, synchronously (the kit's `authenticate` is
 * synchronous): an Authorization header of the right form, this server's access key and scope,
 * `host`, `x-amz-date` and every `x-amz-*` header signed, the date within 15 minutes, a declared
 * payload hash that is the body's. Undefined when all pass; `verifySigV4` then checks the signature.
 */
export function checkSigV4Form(request: SignedRequest, options: VerifyOptions): SigV4Failure | undefined {
    const authorization = header(request, "authorization");
    if (authorization === undefined || authorization === "") {
        return {
            type: "MissingAuthenticationTokenException",
            status: 403,
            message: "Missing Authentication Token: sign the request with AWS Signature Version 4.",
        };
    }
    const parsed = parseAuthorization(authorization);
    if (parsed === undefined) {
        return incomplete(
            "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' in the AWS4-HMAC-SHA256 form.",
        );
    }
    if (parsed.accessKeyId !== options.credentials.accessKeyId) {
        return {
            type: "UnrecognizedClientException",
            status: 403,
            message: "The security token included in the request is invalid: unknown access key id.",
        };
    }
    if (parsed.region !== options.region || parsed.service !== options.service) {
        return {
            type: "InvalidSignatureException",
            status: 403,
            message: `Credential should be scoped to a valid region and service: expected ${options.region}/${options.service}, got ${parsed.region}/${parsed.service}.`,
        };
    }
    const amzDate = header(request, "x-amz-date");
    const signedAt = amzDate === undefined ? undefined : parseAmzDate(amzDate);
    if (amzDate === undefined || signedAt === undefined) {
        return incomplete("The request must carry X-Amz-Date in the form yyyyMMddTHHmmssZ.");
    }
    if (amzDate.slice(0, 8) !== parsed.date) {
        return {
            type: "InvalidSignatureException",
            status: 403,
            message: `Credential should be scoped to the date of X-Amz-Date (${amzDate.slice(0, 8)}), not ${parsed.date}.`,
        };
    }
    const required = [
        "host",
        "x-amz-date",
        ...Object.keys(request.headers).filter((name) => name.startsWith("x-amz-")),
    ];
    const unsigned = required.filter((name) => !parsed.signedHeaders.includes(name));
    if (unsigned.length > 0) return incomplete(`These headers must be signed: ${unsigned.join(", ")}.`);
    const missing = parsed.signedHeaders.filter((name) => header(request, name) === undefined);
    if (missing.length > 0) return incomplete(`Signed headers missing from the request: ${missing.join(", ")}.`);
    const skew = Math.abs(options.now() - signedAt);
    if (skew > MAX_SKEW_MS) {
        return {
            type: "InvalidSignatureException",
            status: 403,
            message: `Signature expired: ${amzDate} is more than 15 minutes from the server's time ${new Date(options.now()).toISOString()}.`,
        };
    }
    const token = header(request, "x-amz-security-token");
    if (token !== options.credentials.sessionToken) {
        return {
            type: "UnrecognizedClientException",
            status: 403,
            message: "The security token included in the request is invalid.",
        };
    }
    const declaredHash = header(request, "x-amz-content-sha256");
    if (declaredHash !== undefined && declaredHash !== sha256Hex(request.rawBody)) {
        return {
            type: "InvalidSignatureException",
            status: 403,
            message: "The X-Amz-Content-Sha256 header is not the SHA-256 of the request body.",
        };
    }
    return undefined;
}

/**
 * Every check of `checkSigV4Form`, then the signature: the request as received (its signed headers
 * only, its method, path, query and body) is signed again with the server's secret at its X-Amz-Date,
 * and the two signatures must be equal.
 */
export async function verifySigV4(request: SignedRequest, options: VerifyOptions): Promise<SigV4Failure | undefined> {
    const failure = checkSigV4Form(request, options);
    if (failure !== undefined) return failure;
    const parsed = parseAuthorization(header(request, "authorization") ?? "");
    const amzDate = header(request, "x-amz-date") ?? "";
    const signedAt = parseAmzDate(amzDate);
    if (parsed === undefined || signedAt === undefined) return incomplete("The Authorization header is malformed.");
    const headers: Record<string, string> = {};
    for (const name of parsed.signedHeaders) headers[name] = header(request, name) ?? "";
    const query: Record<string, string | string[]> = {};
    for (const key of new Set(request.query.keys())) {
        const values = request.query.getAll(key);
        query[key] = values.length === 1 ? (values[0] ?? "") : values;
    }
    const signer = new SignatureV4({
        credentials: options.credentials,
        region: options.region,
        service: options.service,
        sha256: Sha256,
        applyChecksum: false,
    });
    const expected = await signer.sign(
        {
            method: request.method,
            protocol: "http:",
            hostname: (headers.host ?? "").replace(/:\d+$/, ""),
            path: request.path,
            query,
            headers,
            body: request.rawBody,
        },
        { signingDate: new Date(signedAt), signableHeaders: new Set(parsed.signedHeaders) },
    );
    const computed = /Signature=([0-9a-f]{64})$/.exec(String(expected.headers.authorization ?? ""))?.[1] ?? "";
    if (!sameHex(computed, parsed.signature)) {
        return {
            type: "InvalidSignatureException",
            status: 403,
            message:
                "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.",
        };
    }
    return undefined;
}

function parseAuthorization(value: string): ParsedAuthorization | undefined {
    const match = AUTHORIZATION.exec(value.trim());
    if (match === null) return undefined;
    const [, accessKeyId = "", date = "", region = "", service = "", signedHeaders = "", signature = ""] = match;
    return { accessKeyId, date, region, service, signedHeaders: signedHeaders.split(";"), signature };
}

function sha256Hex(text: string): string {
    return createHash("sha256").update(text, "utf8").digest("hex");
}

function sameHex(a: string, b: string): boolean {
    return a.length === b.length && a.length > 0 && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

/** What `signAwsJson` signs: one AWS JSON 1.0 call to a server at `url`. */
export interface AwsJsonCall {
    url: string;
    target: string;
    body: unknown;
    credentials?: TestCredentials;
    region?: string;
    service?: string;
    /** When it was signed (default now). */
    date?: Date;
}

/**
 * The headers of a signed AWS JSON 1.0 POST (Content-Type application/x-amz-json-1.0, X-Amz-Target,
 * X-Amz-Date, Authorization), signed by @smithy/signature-v4 as the AWS SDK does, and the body they
 * sign. `host` is signed but left out of the result: fetch sets it from the URL, to the same value.
 */
export async function signAwsJson(call: AwsJsonCall): Promise<{ headers: Record<string, string>; body: string }> {
    const url = new URL(call.url);
    const body = typeof call.body === "string" ? call.body : JSON.stringify(call.body);
    const signer = new SignatureV4({
        credentials: call.credentials ?? TEST_CREDENTIALS,
        region: call.region ?? TEST_REGION,
        service: call.service ?? TEST_SERVICE,
        sha256: Sha256,
    });
    const signed = await signer.sign(
        {
            method: "POST",
            protocol: url.protocol,
            hostname: url.hostname,
            port: Number(url.port),
            path: url.pathname,
            query: {},
            headers: {
                host: url.host,
                "content-type": "application/x-amz-json-1.0",
                "x-amz-target": call.target,
            },
            body,
        },
        { signingDate: call.date ?? new Date() },
    );
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(signed.headers)) {
        if (name.toLowerCase() !== "host") headers[name] = String(value);
    }
    return { headers, body };
}
