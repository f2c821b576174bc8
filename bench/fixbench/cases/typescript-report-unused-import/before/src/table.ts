import { padRight } from "./pad.js";

export interface Column<Row> {
  title: string;
  value: (row: Row) => string;
}

/** A plain-text table with a header line and columns as wide as their widest cell. */
export function renderTable<Row>(rows: Row[], columns: Column<Row>[]): string {
  const cells = rows.map((row) => columns.map((column) => column.value(row)));
  const widths = columns.map((column, i) => Math.max(column.title.length, ...cells.map((line) => line[i]!.length)));
  const line = (values: string[]) => values.map((v, i) => padRight(v, widths[i]!)).join("  ").trimEnd();
  return [line(columns.map((c) => c.title)), ...cells.map(line)].join("\n");
}
