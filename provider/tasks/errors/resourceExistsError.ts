import { LifecycleError } from "../../shared/errors/lifecycleError";

/**
 * A resource with the natural key exists at the API, and this resource did not create it (no create
 * token, or one none of whose creates made it). Says what exists and how to take it over.
 */
export class ResourceExistsError extends LifecycleError {
    override readonly name = "ResourceExistsError";

    constructor(
        /** How the resource is named in messages. */
        readonly resource: string,
        /** The API's id of the one that exists. */
        readonly existingId: string,
        readonly hasToken: boolean,
        /** What the API says of it ("OK, 1073741824 bytes VMFS"), when its kind says. */
        detail?: string,
        /** What adopting it does, when its kind says. */
        adoptNote = "the next update sends the program's body to it",
        /** Why it is not known to be this resource's, when not for the usual reason. */
        why?: string,
    ) {
        const createdBy =
            why ??
            (hasToken
                ? "none of the creates of this resource's createToken made it"
                : "this resource has no createToken, so it cannot be told apart from one made by someone else");
        super(
            `${resource} already exists (id ${existingId}${detail ? `, ${detail}` : ""}): ${createdBy}. To manage it, set \`adopt: true\` ` +
                `(${adoptNote})` +
                (hasToken
                    ? ""
                    : ", or, if an interrupted `pulumi up` of this program created it, give the resource the createToken it used") +
                "; otherwise choose another natural key.",
        );
    }
}
