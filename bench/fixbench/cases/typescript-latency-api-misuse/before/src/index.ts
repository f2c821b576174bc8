export { summarise, formatSummary, type LatencySummary } from "./summary.js";
export { breaches, type Slo } from "./slo.js";
