let lastRequest = 0;

/**
 * A release call's id: a resent call is answered from its owner's release log (no '=' or ';' in
 * it). The log is per owner, and owner ids carry their client's random id, so a counter is unique
 * where it must be (and cheaper than random bytes on every release).
 */
export function newRequestId(): string {
  lastRequest += 1;
  return lastRequest.toString(36);
}
