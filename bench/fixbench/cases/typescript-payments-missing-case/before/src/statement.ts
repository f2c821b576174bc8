import type { WalletEvent } from "./events.js";
import { assertNever } from "./never.js";

function money(cents: number): string {
  return `${cents < 0 ? "-" : ""}$${(Math.abs(cents) / 100).toFixed(2)}`;
}

/** One statement line as the customer sees it. */
export function statementLine(event: WalletEvent): string {
  const day = event.at.slice(0, 10);
  switch (event.type) {
    case "charge":
      return `${day}  Payment by card ending ${event.card}  ${money(event.amountCents)}`;
    case "refund":
      return `${day}  Refund of ${event.chargeId}  ${money(-event.amountCents)}`;
    case "chargeback":
      return `${day}  Disputed ${event.chargeId} (${event.reason})  ${money(-event.amountCents)}`;
    default:
      return assertNever(event);
  }
}
