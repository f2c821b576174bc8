export { isoDay, isoWeek } from "./dates.js";
export { renderTable, type Column } from "./table.js";
export { renderHeader, type ReportMeta } from "./header.js";
