// What a provider's diff answers, for every resource of the package.

/** The provider's answer to Diff (the dynamic-provider server passes on these fields and drops the rest). */
export interface ResourceDiff {
    changes: boolean;
    replaces: string[];
    deleteBeforeReplace: boolean;
}
