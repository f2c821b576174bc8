export interface CartLine {
  sku: string;
  quantity: number;
  unitCents: number;
}

export interface Cart {
  lines: CartLine[];
  discountCents: number;
  appliedCoupon?: string;
}

export function subtotalCents(cart: Cart): number {
  return cart.lines.reduce((sum, line) => sum + line.quantity * line.unitCents, 0);
}

export function totalCents(cart: Cart): number {
  return Math.max(0, subtotalCents(cart) - cart.discountCents);
}
