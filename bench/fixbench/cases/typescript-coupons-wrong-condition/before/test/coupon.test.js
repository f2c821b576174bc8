import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { applyCoupon, totalCents } from "../dist/index.js";

const now = new Date("2024-11-29T12:00:00Z");
const blackFriday = { code: "BF20", percentOff: 20, minSubtotalCents: 5000, expiresAt: new Date("2024-11-30T00:00:00Z") };
const cart = (unitCents) => ({ lines: [{ sku: "HOODIE", quantity: 2, unitCents }], discountCents: 0 });

describe("applyCoupon", () => {
  test("takes the percentage off a large enough cart", () => {
    const result = applyCoupon(cart(4000), blackFriday, now);
    assert.equal(result.appliedCoupon, "BF20");
    assert.equal(totalCents(result), 6400);
  });

  test("ignores an expired coupon", () => {
    const result = applyCoupon(cart(4000), blackFriday, new Date("2024-12-01T00:00:00Z"));
    assert.equal(result.appliedCoupon, undefined);
    assert.equal(totalCents(result), 8000);
  });

  test("ignores a cart below the minimum", () => {
    const result = applyCoupon(cart(1000), blackFriday, now);
    assert.equal(result.appliedCoupon, undefined);
    assert.equal(totalCents(result), 2000);
  });
});
