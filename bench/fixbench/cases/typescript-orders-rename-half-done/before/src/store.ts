import type { Order, OrderLine } from "./types.js";

let nextId = 1;

export function createOrder(customerId: string, lines: OrderLine[], createdAt = new Date()): Order {
  const id = `ORD-${String(nextId++).padStart(5, "0")}`;
  return { id, customerId, createdAt, lines: [...lines] };
}

export function resetIds(): void {
  nextId = 1;
}
