import { percentileOfSorted, sortedCopy } from "./percentile.js";

export interface LatencySummary {
  count: number;
  min: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** Summary of request latencies in milliseconds. */
export function summarise(samplesMs: readonly number[]): LatencySummary {
  const sorted = sortedCopy(samplesMs);
  return {
    count: sorted.length,
    min: sorted[0] ?? Number.NaN,
    p50: percentileOfSorted(sorted, 50),
    p95: percentileOfSorted(sorted, 95),
    p99: percentileOfSorted(sorted, 99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

export function formatSummary(s: LatencySummary): string {
  return `n=${s.count} min=${s.min}ms p50=${s.p50}ms p95=${s.p95}ms p99=${s.p99}ms max=${s.max}ms`;
}
