import { subtotalCents, type Cart } from "./cart.js";

export interface Coupon {
  code: string;
  percentOff: number;
  minSubtotalCents: number;
  expiresAt: Date;
}

export function isExpired(coupon: Coupon, now: Date): boolean {
  return now.getTime() >= coupon.expiresAt.getTime();
}

/** The cart with the coupon's discount, or the cart unchanged when the coupon does not apply. */
export function applyCoupon(cart: Cart, coupon: Coupon, now: Date): Cart {
  const subtotal = subtotalCents(cart);
  if (isExpired(coupon, now) || subtotal < coupon.minSubtotalCents) {
    return cart;
  }
  const discountCents = Math.round((subtotal * coupon.percentOff) / 100);
  return { ...cart, discountCents, appliedCoupon: coupon.code };
}
