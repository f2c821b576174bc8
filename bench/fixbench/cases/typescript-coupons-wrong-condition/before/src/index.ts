export { subtotalCents, totalCents, type Cart, type CartLine } from "./cart.js";
export { applyCoupon, isExpired, type Coupon } from "./coupon.js";
