export interface ClientOptions {
  /** How often a failed request is sent again; 0 sends it once. */
  retries?: number;
  /** Milliseconds before one attempt is abandoned; 0 waits forever. */
  timeoutMs?: number;
  /** Milliseconds between attempts. */
  backoffMs?: number;
}

export type ResolvedOptions = Required<ClientOptions>;

export const DEFAULTS: ResolvedOptions = { retries: 2, timeoutMs: 10_000, backoffMs: 250 };

export function resolveOptions(options: ClientOptions = {}): ResolvedOptions {
  return {
    retries: options.retries ?? DEFAULTS.retries,
    timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
    backoffMs: options.backoffMs ?? DEFAULTS.backoffMs,
  };
}
