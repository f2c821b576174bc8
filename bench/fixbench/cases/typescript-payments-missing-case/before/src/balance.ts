import type { WalletEvent } from "./events.js";
import { assertNever } from "./never.js";

/** The wallet balance change of one event, in cents. */
export function delta(event: WalletEvent): number {
  switch (event.type) {
    case "charge":
      return event.amountCents;
    case "refund":
    case "chargeback":
      return -event.amountCents;
    default:
      return assertNever(event);
  }
}

export function balance(events: WalletEvent[]): number {
  return events.reduce((sum, event) => sum + delta(event), 0);
}
