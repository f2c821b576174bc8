import { bucketOf } from "./bucket.js";
import type { FlagRegistry } from "./registry.js";

export function isEnabledFor(registry: FlagRegistry, name: string, userId: string): boolean {
  const flag = registry.get(name);
  if (!flag.enabled) return false;
  if (flag.allowList.includes(userId)) return true;
  return bucketOf(flag.name, userId) < flag.percentage;
}
