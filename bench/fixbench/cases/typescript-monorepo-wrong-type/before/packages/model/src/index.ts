export type Priority = "low" | "normal" | "urgent";

export interface Ticket {
  id: number;
  subject: string;
  priority: Priority;
  assignee?: string;
  openedAt: string; // ISO timestamp
}

export function compareTickets(a: Ticket, b: Ticket): number {
  const rank: Record<Priority, number> = { urgent: 0, normal: 1, low: 2 };
  return rank[a.priority] - rank[b.priority] || a.openedAt.localeCompare(b.openedAt);
}
