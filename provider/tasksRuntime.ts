// The composition of the task kinds (see runtime.ts): the Datastore and AsyncResource providers, which
// share one process context (one Cancel hook, one SIGINT handler), and the task API client built from
// the configured settings.
//
// Environment:
//   TASK_API_URL, TASK_API_TOKEN      the task API, when stack config does not set them (see tasks/)

import { AsyncResourceProvider } from "./tasks/asyncResourceProvider";
import { taskApiSettingsIn } from "./tasks/client/stackConfigFiles";
import { TaskApiClient } from "./tasks/client/taskApiClient";
import { DatastoreProvider } from "./tasks/datastoreProvider";
import { processContext, type TaskProcessContext } from "./tasks/processContext";
import { clientOptionsFrom } from "./tasks/taskApiSettings";

let sharedTaskContext: TaskProcessContext | undefined;

/** One context for every task kind of this process: one Cancel hook, one SIGINT handler. */
function taskContext(): TaskProcessContext {
    sharedTaskContext ??= processContext(process.argv[2]);
    return sharedTaskContext;
}

/** The Datastore provider, which connects to the task API its configuration names. */
export function datastoreProvider(env: NodeJS.ProcessEnv = process.env): DatastoreProvider {
    const context = taskContext();
    return new DatastoreProvider(
        context,
        env,
        (settings) =>
            new TaskApiClient({
                ...clientOptionsFrom(settings),
                clock: context.clock,
                sleep: context.sleep,
                random: context.random,
                // The engine starts the provider process in the project's directory.
                settings: taskApiSettingsIn(process.cwd()),
            }),
    );
}

/** The AsyncResource provider: one task API client per API its resources name. */
export function asyncResourceProvider(env: NodeJS.ProcessEnv = process.env): AsyncResourceProvider {
    return new AsyncResourceProvider(taskContext(), env);
}
