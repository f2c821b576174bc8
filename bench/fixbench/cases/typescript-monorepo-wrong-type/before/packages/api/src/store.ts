import type { Ticket } from "../../model/dist/index.js";

export class TicketStore {
  private readonly tickets = new Map<number, Ticket>();
  private lastId = 0;

  open(subject: string, priority: Ticket["priority"], openedAt: string): Ticket {
    const ticket: Ticket = { id: ++this.lastId, subject, priority, openedAt };
    this.tickets.set(ticket.id, ticket);
    return ticket;
  }

  find(id: Ticket["id"]): Ticket | undefined {
    return this.tickets.get(id);
  }

  all(): Ticket[] {
    return [...this.tickets.values()];
  }
}
