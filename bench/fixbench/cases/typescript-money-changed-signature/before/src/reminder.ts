import { invoiceTotal, type Invoice } from "./invoice.js";
import { formatMoney } from "./money.js";

/** The subject line of the payment reminder e-mail. */
export function reminderSubject(invoice: Invoice, daysOverdue: number): string {
  const amount = formatMoney(invoiceTotal(invoice), invoice.currency);
  const when = daysOverdue === 1 ? "1 day" : `${daysOverdue} days`;
  return `Reminder: invoice ${invoice.number} (${amount}) is ${when} overdue`;
}
