import type { LatencySummary } from "./summary.js";

export interface Slo {
  p95Ms: number;
  p99Ms: number;
}

/** The SLO targets the summary misses, as text for the alert. */
export function breaches(summary: LatencySummary, slo: Slo): string[] {
  const out: string[] = [];
  if (summary.p95 > slo.p95Ms) out.push(`p95 ${summary.p95}ms > ${slo.p95Ms}ms`);
  if (summary.p99 > slo.p99Ms) out.push(`p99 ${summary.p99}ms > ${slo.p99Ms}ms`);
  return out;
}
