export { FlagRegistry, type Flag } from "./registry.js";
export { isEnabledFor } from "./rollout.js";
export { describeAll, describeFlag } from "./admin.js";
