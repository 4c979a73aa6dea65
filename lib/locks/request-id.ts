import { randomBytes } from 'node:crypto';

/** A release call's id: a resent call is answered from the release log (no '=' or ';' in it). */
export function newRequestId(): string {
  return randomBytes(9).toString('base64url');
}
