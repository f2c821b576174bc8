import type { Order } from "./types.js";
import { orderTotalCents } from "./pricing.js";

export interface CustomerSummary {
  customerId: string;
  orders: number;
  totalCents: number;
}

export function summariseByCustomer(orders: Order[]): CustomerSummary[] {
  const byCustomer = new Map<string, CustomerSummary>();
  for (const order of orders) {
    const summary = byCustomer.get(order.customerId) ?? { customerId: order.customerId, orders: 0, totalCents: 0 };
    summary.orders += 1;
    summary.totalCents += orderTotalCents(order);
    byCustomer.set(order.customerId, summary);
  }
  return [...byCustomer.values()].sort((a, b) => b.totalCents - a.totalCents);
}
