export type { Order, OrderLine } from "./types.js";
export { createOrder, resetIds } from "./store.js";
export { orderTotalCents, formatCents } from "./pricing.js";
export { summariseByCustomer } from "./report.js";
export { renderInvoice } from "./invoice.js";
