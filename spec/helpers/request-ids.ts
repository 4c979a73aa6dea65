import type { CallRequest } from '../../lib/scripts/registry.js';

/** A request with a fixed id, for calling the scripts directly: the same id twice is a resend. */
export function fixedRequest(id: string): CallRequest {
  return { id, sending: () => undefined, settled: () => undefined };
}

/** Fresh requests for calling the scripts directly: a repeated id would be a resend. */
export function requestIds(): () => CallRequest {
  let last = 0;
  return () => {
    last += 1;
    return fixedRequest(`t${last}`);
  };
}
