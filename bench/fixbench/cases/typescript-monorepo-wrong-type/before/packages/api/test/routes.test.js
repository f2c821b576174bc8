import { test } from "node:test";
import assert from "node:assert/strict";
import { TicketStore, getTicket, queue } from "../dist/index.js";

function store() {
  const s = new TicketStore();
  s.open("Printer on fire", "urgent", "2024-05-02T09:00:00Z");
  s.open("Password reset", "normal", "2024-05-01T08:00:00Z");
  s.open("New mouse", "low", "2024-04-30T10:00:00Z");
  return s;
}

test("queue puts urgent tickets first", () => {
  const subjects = queue(store()).body.map((t) => t.subject);
  assert.deepEqual(subjects, ["Printer on fire", "Password reset", "New mouse"]);
});

test("a ticket is found by the id it was given", () => {
  const s = store();
  const [first] = s.all();
  const response = getTicket(s, String(first.id));
  assert.equal(response.status, 200);
  assert.equal(response.body.subject, "Printer on fire");
});

test("an unknown id is 404", () => {
  assert.equal(getTicket(store(), "999999").status, 404);
});
