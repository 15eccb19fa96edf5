// A datastore whose creation is an asynchronous task: POST, poll the task, GET. The create token from
// @pulumi/random makes a retried or interrupted create idempotent: no duplicate, no zombie. The API
// token is a secret stack config value (`pulumi config set --secret pulumi-lifecycle:taskApiToken ...`)
// and never reaches the state. `pulumi config set sizeGiB 32` then `pulumi up` grows it in place.

import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import { tasks } from "pulumi-lifecycle";

const config = new pulumi.Config();

const token = new random.RandomUuid("ds19-token");
const ds = new tasks.Datastore("ds19", {
    hciClusterUuid: "126fd201-9e6e-5e31-9ffb-a766265b1fd3",
    clusterId: "298a299e-78f5-5acb-86ce-4e9fdc290ab7",
    name: "ds19",
    sizeInBytes: config.requireNumber("sizeGiB") * 2 ** 30,
    datastoreType: "VMFS",
    createToken: token.result,
    timeouts: { create: "30m" },
});

export const datastoreId = ds.datastoreId;
export const state = ds.state;
export const sizeInBytes = ds.sizeInBytes;
