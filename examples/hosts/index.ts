// The main example: three entries of a hosts file, two of them the same names for IPv4 and IPv6.
// The file comes from stack config `pulumi-lifecycle:hostsFile` (demo.hosts, set in Pulumi.yaml);
// `pulumi config set apiAddress 10.0.0.7` then `pulumi up` rewrites the api line in place.

import * as pulumi from "@pulumi/pulumi";
import { hosts } from "pulumi-lifecycle";

const config = new pulumi.Config();

const web = new hosts.HostEntry("web", {
    address: "10.0.0.5",
    names: ["web.internal", "web"],
    comment: "frontend",
});

const api = new hosts.HostEntry("api", {
    address: config.require("apiAddress"),
    names: ["api.internal", "api"],
});

const apiIpv6 = new hosts.HostEntry("api-ipv6", {
    address: "fd00::6",
    names: ["api.internal", "api"],
    comment: "the same names, for IPv6",
});

export const file = web.file;
export const ids = [web.id, api.id, apiIpv6.id];
export const lines = { web: web.line, api: api.line, apiIpv6: apiIpv6.line };
