import { LifecycleError } from "../../shared/errors/lifecycleError";

/** A HostEntry id names one machine (or none) and the `connection` given names another. */
export class EntryMachineError extends LifecycleError {
    override readonly name = "EntryMachineError";

    constructor(
        readonly id: string,
        readonly idMachine: string | undefined,
        readonly connectionMachine: string | undefined,
    ) {
        const idSays = idMachine === undefined ? "an entry of the machine running Pulumi" : `an entry on ${idMachine}`;
        const given =
            connectionMachine === undefined ? "no `connection` was given" : `\`connection\` names ${connectionMachine}`;
        const fix =
            idMachine === undefined
                ? "leave `connection` out, or use the id with `@<host>:<port>` of the machine you mean"
                : `pass \`connection\` with the host and port of ${idMachine} (and its hostKey and credentials)`;
        super(`host entry id ${JSON.stringify(id)} is ${idSays}, but ${given}: ${fix}.`);
    }
}
