import { isoDay, isoWeek } from "./dates.js";

export interface ReportMeta {
  title: string;
  generatedAt: Date;
  author?: string;
}

export function renderHeader(meta: ReportMeta): string {
  const by = meta.author ? ` by ${meta.author}` : "";
  return `${meta.title}\n${isoDay(meta.generatedAt)} (${isoWeek(meta.generatedAt)})${by}`;
}
