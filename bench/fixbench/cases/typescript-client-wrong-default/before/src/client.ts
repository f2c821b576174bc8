import { resolveOptions, type ClientOptions, type ResolvedOptions } from "./options.js";

export interface Response {
  status: number;
  body: string;
}

/** Sends one request; the real one wraps fetch, tests pass a fake. */
export type Transport = (path: string, timeoutMs: number) => Promise<Response>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class ApiClient {
  readonly options: ResolvedOptions;

  constructor(private readonly transport: Transport, options?: ClientOptions) {
    this.options = resolveOptions(options);
  }

  /** GETs path, retrying 5xx answers and transport errors. */
  async get(path: string): Promise<Response> {
    let lastError: unknown;
    for (let attempt = 0; attempt <= this.options.retries; attempt++) {
      if (attempt > 0) await sleep(this.options.backoffMs);
      try {
        const response = await this.transport(path, this.options.timeoutMs);
        if (response.status < 500) return response;
        lastError = new Error(`HTTP ${response.status} from ${path}`);
      } catch (error) {
        lastError = error;
      }
    }
    throw lastError;
  }
}
