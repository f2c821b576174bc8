import type { FlagRegistry } from "./registry.js";

/** One line per flag for the admin page: "checkout-v2  on  25%". */
export function describeFlag(registry: FlagRegistry, name: string): string {
  const flag = registry.get(name);
  const state = flag.enabled ? "on " : "off";
  return `${flag.name.padEnd(14)}${state}  ${flag.percentage}%`;
}

export function describeAll(registry: FlagRegistry): string {
  return registry.names().map((name) => describeFlag(registry, name)).join("\n");
}
