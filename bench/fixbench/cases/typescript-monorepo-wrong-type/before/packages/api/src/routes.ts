import { compareTickets, type Ticket } from "../../model/dist/index.js";
import type { TicketStore } from "./store.js";

export interface ApiResponse {
  status: number;
  body: unknown;
}

/** GET /tickets/:id — the id comes from the URL path. */
export function getTicket(store: TicketStore, rawId: string): ApiResponse {
  const id = Number.parseInt(rawId, 10);
  if (Number.isNaN(id)) return { status: 400, body: { error: "ticket id must be a number" } };
  const ticket = store.find(id);
  return ticket ? { status: 200, body: ticket } : { status: 404, body: { error: `no ticket ${rawId}` } };
}

/** GET /queue — open tickets, most urgent and oldest first. */
export function queue(store: TicketStore): ApiResponse {
  const tickets: Ticket[] = store.all().filter((t) => !t.assignee).sort(compareTickets);
  return { status: 200, body: tickets.map((t) => ({ id: t.id, subject: t.subject, priority: t.priority })) };
}
