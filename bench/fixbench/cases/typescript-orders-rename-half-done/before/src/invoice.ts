import type { Order } from "./types.js";
import { formatCents, orderTotalCents } from "./pricing.js";

export function renderInvoice(order: Order): string {
  const header = `Invoice ${order.id} for customer ${order.customerId}`;
  const body = order.lines.map(
    (line) => `  ${line.sku.padEnd(10)} x${line.quantity}  ${formatCents(line.quantity * line.unitPriceCents)}`,
  );
  return [header, ...body, `  total ${formatCents(orderTotalCents(order))}`].join("\n");
}
