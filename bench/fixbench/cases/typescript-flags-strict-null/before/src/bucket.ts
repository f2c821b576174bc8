/** A stable 0-99 bucket for a user and flag (FNV-1a), so a user keeps their variant. */
export function bucketOf(flagName: string, userId: string): number {
  let hash = 0x811c9dc5;
  for (const ch of `${flagName}:${userId}`) {
    hash ^= ch.codePointAt(0)!;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % 100;
}
