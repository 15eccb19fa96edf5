// The one average the benchmarks quote: the middle of their runs, so one run that a noisy machine slowed
// does not move a figure.

/** The median of `values` (the upper of the two middle ones when there is an even number). */
export function median(values: readonly number[]): number {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)] as number;
}
