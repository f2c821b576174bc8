import { formatMoney } from "./money.js";

export interface InvoiceLine {
  description: string;
  cents: number;
}

export interface Invoice {
  number: string;
  currency: string;
  lines: InvoiceLine[];
}

export function invoiceTotal(invoice: Invoice): number {
  return invoice.lines.reduce((sum, line) => sum + line.cents, 0);
}

export function renderInvoice(invoice: Invoice): string {
  const rows = invoice.lines.map((line) => `${line.description}: ${formatMoney(line.cents, invoice.currency)}`);
  return [`Invoice ${invoice.number}`, ...rows, `Total: ${formatMoney(invoiceTotal(invoice), invoice.currency)}`].join("\n");
}
