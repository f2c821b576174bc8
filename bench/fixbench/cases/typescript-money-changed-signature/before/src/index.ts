export { formatMoney } from "./money.js";
export { renderInvoice, invoiceTotal, type Invoice, type InvoiceLine } from "./invoice.js";
export { reminderSubject } from "./reminder.js";
