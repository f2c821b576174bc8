export function pad2(n: number): string {
  return String(n).padStart(2, "0");
}

export function padRight(text: string, width: number): string {
  return text.length >= width ? text : text + " ".repeat(width - text.length);
}
