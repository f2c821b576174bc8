export { TicketStore } from "./store.js";
export { getTicket, queue, type ApiResponse } from "./routes.js";
