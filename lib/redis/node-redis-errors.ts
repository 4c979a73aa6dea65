/** Whether `error` is Redis' own answer (node-redis' ErrorReply and its subclasses), not a failed connection. */
export function isReplyError(error: unknown): boolean {
  for (let proto: unknown = error; proto !== null && proto !== undefined; proto = Object.getPrototypeOf(proto)) {
    if ((proto as { constructor?: { name?: string } }).constructor?.name === 'ErrorReply') return true;
  }
  return false;
}
