/** Formats an amount in minor units (cents) for display, e.g. formatMoney(129900, "USD") -> "$1,299.00". */
export function formatMoney(cents: number, currency: string): string {
  return new Intl.NumberFormat("en-US", { style: "currency", currency }).format(cents / 100);
}
