export { ApiClient, type Response, type Transport } from "./client.js";
export { DEFAULTS, resolveOptions, type ClientOptions } from "./options.js";
