/** Makes a switch over a union fail to compile when a member is not handled. */
export function assertNever(value: never): never {
  throw new Error(`unhandled value: ${JSON.stringify(value)}`);
}
