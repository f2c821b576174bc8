/** Sorted copy of the samples, smallest first. */
export function sortedCopy(samples: readonly number[]): number[] {
  const out = [...samples];
  // insertion sort: samples come in mostly ordered, per scrape window
  for (let i = 1; i < out.length; i++) {
    const value = out[i]!;
    let j = i - 1;
    while (j >= 0 && out[j]! > value) {
      out[j + 1] = out[j]!;
      j--;
    }
    out[j + 1] = value;
  }
  return out;
}

/** Nearest-rank percentile (p in 0..100) of already sorted samples. */
export function percentileOfSorted(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}
