import { test } from "node:test";
import assert from "node:assert/strict";
import { summarise, formatSummary, breaches } from "../dist/index.js";

// 20 requests: mostly fast, one slow outlier
const samples = [12, 9, 15, 11, 10, 8, 14, 13, 9, 250, 11, 12, 10, 16, 9, 12, 11, 95, 10, 13];

test("summary of a scrape window", () => {
  assert.equal(formatSummary(summarise(samples)), "n=20 min=8ms p50=11ms p95=95ms p99=250ms max=250ms");
});

test("breaches name the missed targets", () => {
  assert.deepEqual(breaches(summarise(samples), { p95Ms: 100, p99Ms: 200 }), ["p99 250ms > 200ms"]);
});

test("an empty window has no percentiles", () => {
  assert.ok(Number.isNaN(summarise([]).p50));
});
