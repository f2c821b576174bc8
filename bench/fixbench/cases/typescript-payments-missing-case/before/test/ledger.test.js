import { test } from "node:test";
import assert from "node:assert/strict";
import { balance, statementLine } from "../dist/index.js";

const events = [
  { type: "charge", id: "ch_1", at: "2024-06-01T09:00:00Z", amountCents: 5000, card: "4242" },
  { type: "refund", id: "re_1", at: "2024-06-02T10:00:00Z", amountCents: 1200, chargeId: "ch_1" },
  { type: "chargeback", id: "cb_1", at: "2024-06-20T10:00:00Z", amountCents: 800, chargeId: "ch_1", reason: "fraud" },
];

test("balance sums charges minus refunds and chargebacks", () => {
  assert.equal(balance(events), 3000);
});

test("statement lines", () => {
  assert.deepEqual(events.map(statementLine), [
    "2024-06-01  Payment by card ending 4242  $50.00",
    "2024-06-02  Refund of ch_1  -$12.00",
    "2024-06-20  Disputed ch_1 (fraud)  -$8.00",
  ]);
});
