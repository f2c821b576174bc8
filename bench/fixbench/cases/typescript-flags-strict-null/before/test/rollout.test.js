import { test } from "node:test";
import assert from "node:assert/strict";
import { FlagRegistry, isEnabledFor, describeAll } from "../dist/index.js";

const registry = new FlagRegistry([
  { name: "checkout-v2", enabled: true, percentage: 0, allowList: ["qa-1"] },
  { name: "dark-mode", enabled: true, percentage: 100, allowList: [] },
  { name: "legacy-export", enabled: false, percentage: 100, allowList: ["qa-1"] },
]);

test("allow-listed users get a flag at 0%", () => {
  assert.equal(isEnabledFor(registry, "checkout-v2", "qa-1"), true);
  assert.equal(isEnabledFor(registry, "checkout-v2", "user-7"), false);
});

test("a disabled flag is off even for allow-listed users", () => {
  assert.equal(isEnabledFor(registry, "legacy-export", "qa-1"), false);
});

test("100% reaches everyone", () => {
  for (const user of ["a", "b", "c", "d"]) assert.equal(isEnabledFor(registry, "dark-mode", user), true);
});

test("admin page lists flags by name", () => {
  assert.equal(describeAll(registry).split("\n")[0], "checkout-v2   on   0%");
});
