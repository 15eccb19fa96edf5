// The generated fault suites run a fixed budget of cases: CI's in `npm test`, and a smaller sample in the
// inner loop, `npm run test:quick`, which sets PL_TEST_PROFILE=quick (as property-based testing tools
// keep a development profile beside the CI one). A suite's own variable (CHAOS_SEEDS, ...) still wins.

/** Which budget this run uses. */
const testProfile: "full" | "quick" = process.env.PL_TEST_PROFILE === "quick" ? "quick" : "full";

/** The budget of this run's profile. */
export function budget<T>(budgets: { readonly full: T; readonly quick: T }): T {
    return budgets[testProfile];
}
