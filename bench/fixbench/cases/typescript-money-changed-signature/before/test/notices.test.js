import { test } from "node:test";
import assert from "node:assert/strict";
import { renderInvoice, reminderSubject } from "../dist/index.js";

const invoice = {
  number: "2024-0117",
  currency: "USD",
  lines: [
    { description: "Hosting (June)", cents: 4900 },
    { description: "Support hours", cents: 125000 },
  ],
};

test("invoice lists lines and total", () => {
  assert.equal(
    renderInvoice(invoice),
    "Invoice 2024-0117\nHosting (June): $49.00\nSupport hours: $1,250.00\nTotal: $1,299.00",
  );
});

test("reminder subject", () => {
  assert.equal(reminderSubject(invoice, 1), "Reminder: invoice 2024-0117 ($1,299.00) is 1 day overdue");
});
