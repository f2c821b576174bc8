import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { ApiClient, DEFAULTS, resolveOptions } from "../dist/index.js";

function flaky(failures) {
  const calls = [];
  const transport = async (path, timeoutMs) => {
    calls.push({ path, timeoutMs });
    return calls.length <= failures ? { status: 503, body: "" } : { status: 200, body: "ok" };
  };
  return { transport, calls };
}

describe("resolveOptions", () => {
  test("fills in defaults", () => {
    assert.deepEqual(resolveOptions(), DEFAULTS);
  });

  test("keeps explicit zeros", () => {
    assert.deepEqual(resolveOptions({ retries: 0, timeoutMs: 0, backoffMs: 0 }), { retries: 0, timeoutMs: 0, backoffMs: 0 });
  });
});

describe("ApiClient.get", () => {
  test("retries 5xx answers", async () => {
    const { transport, calls } = flaky(2);
    const client = new ApiClient(transport, { backoffMs: 1 });
    assert.equal((await client.get("/health")).body, "ok");
    assert.equal(calls.length, 3);
  });

  test("retries: 0 sends the request once", async () => {
    const { transport, calls } = flaky(1);
    const client = new ApiClient(transport, { retries: 0, backoffMs: 1 });
    await assert.rejects(client.get("/orders"), /HTTP 503 from \/orders/);
    assert.equal(calls.length, 1);
  });
});
