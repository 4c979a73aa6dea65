import { InvalidArgumentError } from '../errors.js';
import { redNodeOf, type RedNode } from './red-node.js';
import type { RLock } from '../locks/lock-interfaces.js';
import { REDLOCK_DEFAULTS } from '../options.js';
import { checkCount, checkOptions, checkPositiveDuration } from '../validate.js';

const REDLOCK_OPTIONS = ['nodeTimeout', 'maxRenewals'];


function isPlainObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}


function parseOptions(options: unknown): { nodeTimeoutMs: number; maxRenewals: number | undefined } {
  const raw = checkOptions(options, REDLOCK_OPTIONS);
  return {
    nodeTimeoutMs:
      raw.nodeTimeout === undefined ? REDLOCK_DEFAULTS.nodeTimeout : checkPositiveDuration(raw.nodeTimeout, 'nodeTimeout'),
    maxRenewals: raw.maxRenewals === undefined ? undefined : checkCount(raw.maxRenewals, 'maxRenewals'),
  };
}

/** A RedLock's checked constructor arguments. */
export interface RedLockArgs {
  readonly locks: RLock[];
  readonly nodes: RedNode[];
  readonly nodeTimeoutMs: number;
  readonly maxRenewals: number | undefined;
}

/**
 * `new RedLock(...locks, options?)`'s arguments: one lock from `getLock()` per independent master,
 * each from its own client and server, then optionally the options.
 * @throws InvalidArgumentError otherwise.
 */
export function parseRedLockArgs(args: unknown[]): RedLockArgs {
  const last = args.at(-1);
  const hasOptions = args.length > 0 && redNodeOf(last) === undefined && isPlainObject(last);
  const options = parseOptions(hasOptions ? last : undefined);
  const locks = hasOptions ? args.slice(0, -1) : args;
  if (locks.length === 0) {
    throw new InvalidArgumentError('`RedLock` needs at least one lock: one per independent Redis master');
  }
  const nodes = locks.map((lock, i) => {
    const node = redNodeOf(lock);
    if (!node) throw new InvalidArgumentError(`RedLock argument ${i + 1} is not a lock from \`LockClient.getLock()\``);
    return node;
  });
  nodes.forEach((node, i) => {
    // Where a connection to a given server points (a Cluster or Sentinel master is found through others).
    const address = node.core.redis.address;
    for (let j = 0; j < i; j += 1) {
      const other = nodes[j]!;
      if (locks[j] === locks[i]) throw new InvalidArgumentError(`RedLock locks ${j + 1} and ${i + 1} are the same lock`);
      if (other.core.clientId === node.core.clientId) {
        throw new InvalidArgumentError(`RedLock locks ${j + 1} and ${i + 1} come from the same LockClient: use one client per Redis master`);
      }
      if (other.core.redis.connection === node.core.redis.connection || (address !== undefined && address === other.core.redis.address)) {
        throw new InvalidArgumentError(
          `RedLock locks ${j + 1} and ${i + 1} are on the same Redis server${address === undefined ? '' : ` (${address})`}: the nodes must be independent masters`,
        );
      }
    }
  });
  return { locks: locks as RLock[], nodes, nodeTimeoutMs: options.nodeTimeoutMs, maxRenewals: options.maxRenewals };
}
