import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { createOrder, resetIds, summariseByCustomer, renderInvoice } from "../dist/index.js";

beforeEach(() => resetIds());

test("summary groups orders per customer, largest first", () => {
  const orders = [
    createOrder("c-1", [{ sku: "PEN", quantity: 3, unitPriceCents: 150 }]),
    createOrder("c-2", [{ sku: "DESK", quantity: 1, unitPriceCents: 12900 }]),
    createOrder("c-1", [{ sku: "INK", quantity: 2, unitPriceCents: 399 }]),
  ];
  const summary = summariseByCustomer(orders);
  assert.deepEqual(summary.map((s) => [s.customerId, s.orders, s.totalCents]), [
    ["c-2", 1, 12900],
    ["c-1", 2, 1248],
  ]);
});

test("invoice names the order and its customer", () => {
  const order = createOrder("c-9", [{ sku: "PEN", quantity: 2, unitPriceCents: 150 }]);
  const text = renderInvoice(order);
  assert.match(text, /^Invoice ORD-00001 for customer c-9$/m);
  assert.match(text, /total 3\.00$/);
});
