export type { WalletEvent, Charge, Refund, Chargeback } from "./events.js";
export { balance, delta } from "./balance.js";
export { statementLine } from "./statement.js";
