interface BaseEvent {
  id: string;
  at: string; // ISO timestamp
}

export interface Charge extends BaseEvent {
  type: "charge";
  amountCents: number;
  card: string; // last four digits
}

export interface Refund extends BaseEvent {
  type: "refund";
  amountCents: number;
  chargeId: string;
}

export interface Chargeback extends BaseEvent {
  type: "chargeback";
  amountCents: number;
  chargeId: string;
  reason: string;
}

export type WalletEvent = Charge | Refund | Chargeback;
