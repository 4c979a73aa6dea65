import { InvalidArgumentError } from './errors.js';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULTS, MAX_CLIENT_NAME_LENGTH, MIN_LEASE_MS, MIN_MAX_STALL_MS, replicaAck } from './options.js';
import type { RedisPort, ReplicaAck } from './redis/port.js';

/** The largest duration Redis PEXPIRE and Node timers both accept, ms. */
export const MAX_DURATION_MS = 2 ** 31 - 1;

/** A lease of -1 means "watchdog mode": renewed while held. */
export const WATCHDOG_LEASE = -1;

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value == null) return String(value);
  return typeof value;
}

/** A lock name: any non-empty string. */
export function checkLockName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new InvalidArgumentError(`\`name\` must be a non-empty string, got ${describe(name)}`);
  }
  return name;
}

function checkDuration(value: unknown, option: string, lockName?: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_DURATION_MS) {
    throw new InvalidArgumentError(
      `\`${option}\` must be a finite number of ms from 0 to ${MAX_DURATION_MS}, got ${describe(value)}`,
      { lockName },
    );
  }
  return Math.ceil(value);
}

/** A wait budget in ms; `undefined` means "wait without limit" (or "one attempt", for tryLock). */
export function checkWaitTime(value: unknown, lockName?: string): number | undefined {
  return value === undefined ? undefined : checkDuration(value, 'waitTime', lockName);
}

/** A lease in ms; omitted or -1 means watchdog mode. */
export function checkLeaseTime(value: unknown, lockName?: string): number {
  if (value === undefined || value === WATCHDOG_LEASE) return WATCHDOG_LEASE;
  const lease = checkDuration(value, 'leaseTime', lockName);
  if (lease < MIN_LEASE_MS) {
    throw new InvalidArgumentError(
      `\`leaseTime\` must be at least ${MIN_LEASE_MS} ms (the holder counts a lease as ended 1 % + 25 ms early), ` +
        `or -1 for watchdog mode, got ${describe(value)}`,
      { lockName },
    );
  }
  return lease;
}

/** The client's `watchdogTimeout`: the lease the watchdog keeps renewing, at least MIN_LEASE_MS. */
export function checkWatchdogTimeout(value: unknown): number {
  const ms = checkDuration(value, 'watchdogTimeout');
  if (ms < MIN_LEASE_MS) throw new InvalidArgumentError(`\`watchdogTimeout\` must be at least ${MIN_LEASE_MS} ms, got ${describe(value)}`);
  return ms;
}

/** A positive whole duration option such as `watchdogTimeout`. */
export function checkPositiveDuration(value: unknown, option: string): number {
  const ms = checkDuration(value, option);
  if (ms === 0) throw new InvalidArgumentError(`\`${option}\` must be positive, got 0`);
  return ms;
}

export function checkSignal(signal: unknown, lockName?: string): AbortSignal | undefined {
  if (signal === undefined) return undefined;
  if (!(signal instanceof AbortSignal)) {
    throw new InvalidArgumentError(`\`signal\` must be an AbortSignal, got ${describe(signal)}`, { lockName });
  }
  return signal;
}

export function checkFunction<F extends (...args: never[]) => unknown>(fn: unknown, option: string): F {
  if (typeof fn !== 'function') throw new InvalidArgumentError(`\`${option}\` must be a function, got ${describe(fn)}`);
  return fn as F;
}

export function checkObject(value: unknown, option: string): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError(`\`${option}\` must be an object, got ${describe(value)}`);
  }
  return value as Record<string, unknown>;
}

const NO_OPTIONS: Record<string, unknown> = Object.freeze({});

/**
 * `value` as an options object (undefined: `{}`) whose every key is one of `accepted`. A
 * misspelt or foreign key (`lease` for `leaseTime`) would otherwise be dropped in silence and the
 * call run with its defaults: every public call that takes options checks them here.
 */
export function checkOptions(value: unknown, accepted: readonly string[], lockName?: string, option = 'options'): Record<string, unknown> {
  // No options (most calls): nothing to check, no object to make.
  if (value === undefined) return NO_OPTIONS;
  const raw = checkObject(value, option);
  for (const key of Object.keys(raw)) {
    if (!accepted.includes(key)) {
      const where = option === 'options' ? '' : ` in \`${option}\``;
      throw new InvalidArgumentError(`unknown option \`${key}\`${where} (accepted: ${accepted.join(', ')})`, { lockName });
    }
  }
  return raw;
}

/** The options of a waiting acquisition (acquire, withLock, tryLock's and tryLockAndGetToken's object form). */
export const WAIT_OPTIONS = ['waitTime', 'leaseTime', 'signal', 'maxHoldTime'] as const;

/** The options after the positional times (`lock(leaseTime, …)`, `tryLock(waitTime, leaseTime, …)`). */
export const SIGNAL_OPTIONS = ['signal', 'maxHoldTime'] as const;

/** The key prefix goes inside the `{…}` hash tag, so it may not contain braces itself. */
export function checkKeyPrefix(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || /[{}]/.test(value)) {
    throw new InvalidArgumentError(`\`keyPrefix\` must be a non-empty string without braces, got ${describe(value)}`);
  }
  return value;
}

/** `syncReplicas`: `{ replicas: whole number ≥ 1, timeout: ms }`. */
export function checkSyncReplicas(value: unknown): { replicas: number; timeout: number } {
  const raw = checkOptions(value, ['replicas', 'timeout'], undefined, 'syncReplicas');
  const { replicas } = raw;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 1 || replicas > 1_000) {
    throw new InvalidArgumentError(`\`syncReplicas.replicas\` must be a whole number from 1 to 1000, got ${describe(replicas)}`);
  }
  return { replicas, timeout: checkPositiveDuration(raw.timeout, 'syncReplicas.timeout') };
}

/** One of a fixed set of strings. */
export function checkOneOf<T extends string>(value: unknown, option: string, allowed: readonly T[]): T {
  if (!allowed.includes(value as T)) {
    throw new InvalidArgumentError(`\`${option}\` must be one of ${allowed.map((a) => `'${a}'`).join(', ')}, got ${describe(value)}`);
  }
  return value as T;
}

/** The checked arguments of an acquiring call. */
export interface ParsedWait {
  /** undefined: no budget (tryLock: one attempt; the others wait without limit). */
  waitMs: number | undefined;
  /** WATCHDOG_LEASE (-1) or a positive lease. */
  leaseMs: number;
  signal: AbortSignal | undefined;
  /** `maxHoldTime`, ms; undefined: the client's. */
  maxHoldMs?: number | undefined;
}

/** `maxHoldTime` (a call's or the client's): a positive duration, undefined when omitted. */
export function checkMaxHoldTime(value: unknown, lockName?: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = checkDuration(value, 'maxHoldTime', lockName);
  if (ms === 0) throw new InvalidArgumentError('`maxHoldTime` must be positive, got 0', { lockName });
  return ms;
}

/** `{ waitTime?, leaseTime?, signal? }` (acquire, withLock, tryLock's object form). */
export function checkWaitOptions(options: unknown, lockName?: string): ParsedWait {
  const raw = checkOptions(options, WAIT_OPTIONS, lockName);
  return {
    waitMs: checkWaitTime(raw.waitTime, lockName),
    leaseMs: checkLeaseTime(raw.leaseTime, lockName),
    signal: checkSignal(raw.signal, lockName),
    maxHoldMs: checkMaxHoldTime(raw.maxHoldTime, lockName),
  };
}

/** tryLock's arguments: (waitTime?, leaseTime?, { signal }?) or one options object. */
export function checkTryLockArgs(waitOrOptions: unknown, leaseTime: unknown, options: unknown, lockName?: string): ParsedWait {
  if (typeof waitOrOptions === 'object' && waitOrOptions !== null) {
    if (leaseTime !== undefined || options !== undefined) {
      throw new InvalidArgumentError('the options form `tryLock({ waitTime, leaseTime, … })` takes no further arguments', { lockName });
    }
    return checkWaitOptions(waitOrOptions, lockName);
  }
  const raw = checkOptions(options, SIGNAL_OPTIONS, lockName);
  return {
    waitMs: checkWaitTime(waitOrOptions, lockName),
    leaseMs: checkLeaseTime(leaseTime, lockName),
    signal: checkSignal(raw.signal, lockName),
    maxHoldMs: checkMaxHoldTime(raw.maxHoldTime, lockName),
  };
}

/** lock()'s arguments: (leaseTime?, { signal }?). */
export function checkLockArgs(leaseTime: unknown, options: unknown, lockName?: string): ParsedWait {
  const raw = checkOptions(options, SIGNAL_OPTIONS, lockName);
  return {
    waitMs: undefined,
    leaseMs: checkLeaseTime(leaseTime, lockName),
    signal: checkSignal(raw.signal, lockName),
    maxHoldMs: checkMaxHoldTime(raw.maxHoldTime, lockName),
  };
}

/** `lease.handOff(options)`, `permit.handOff(options)`: `{ adoptWithin? }`, a positive duration. */
export function checkHandOffOptions(options: unknown, lockName: string): void {
  const raw = checkOptions(options, ['adoptWithin'], lockName);
  if (raw.adoptWithin !== undefined) checkPositiveDuration(raw.adoptWithin, 'adoptWithin');
}

/** `locks.adopt(handle, options)`, `redLock.adopt(handle, options)`: `{ maxHoldTime? }`; its maxHoldTime, ms. */
export function checkAdoptOptions(options: unknown, lockName: string): number | undefined {
  return checkMaxHoldTime(checkOptions(options, ['maxHoldTime'], lockName).maxHoldTime, lockName);
}

/** A count option such as `maxRenewals`: a whole number ≥ 0. */
export function checkCount(value: unknown, option: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new InvalidArgumentError(`\`${option}\` must be a whole number ≥ 0, got ${describe(value)}`);
  }
  return value;
}

const CLIENT_OPTIONS = ['keyPrefix', 'watchdogTimeout', 'fairLockWaitTimeout', 'maxHoldTime', 'subscriber', 'syncReplicas', 'pubsub', 'clientName', 'renewalThread'];

/** `clientName`: 1 to MAX_CLIENT_NAME_LENGTH characters, none a control character (it is printed on terminals). */
export function checkClientName(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  // eslint-disable-next-line no-control-regex
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_CLIENT_NAME_LENGTH || /[\u0000-\u001f\u007f]/.test(value)) {
    throw new InvalidArgumentError(
      `\`clientName\` must be a string of 1 to ${MAX_CLIENT_NAME_LENGTH} characters without control characters, got ${describe(value)}`,
    );
  }
  return value;
}

/** `renewalThread`, checked: the module's URL and maxStall in ms. */
export interface RenewalThreadSettings {
  readonly connect: string;
  readonly maxStallMs: number;
}

/** Checks `renewalThread` (undefined: no thread) for a client whose lease is `leaseMs`; maxStall defaults to 3 leases. */
export function checkRenewalThread(value: unknown, leaseMs: number): RenewalThreadSettings | undefined {
  if (value === undefined) return undefined;
  const raw = checkOptions(value, ['connect', 'maxStall'], undefined, 'renewalThread');
  const maxStallMs = raw.maxStall === undefined ? 3 * leaseMs : checkPositiveDuration(raw.maxStall, 'renewalThread.maxStall');
  if (maxStallMs < MIN_MAX_STALL_MS) {
    throw new InvalidArgumentError(`\`renewalThread.maxStall\` must be at least ${MIN_MAX_STALL_MS} ms, got ${describe(raw.maxStall)}`);
  }
  const { connect } = raw;
  if (connect instanceof URL) return { connect: connect.href, maxStallMs };
  if (typeof connect !== 'string' || connect.trim() === '') {
    throw new InvalidArgumentError(`\`renewalThread.connect\` must be a module's path or URL (a string or URL), got ${describe(connect)}`);
  }
  // A scheme of two or more letters (file:, data:) is a URL; a path is relative to the working directory.
  const url = /^[a-z][a-z0-9+.-]+:/i.test(connect) ? connect : pathToFileURL(isAbsolute(connect) ? connect : resolve(connect)).href;
  return { connect: url, maxStallMs };
}

/** A LockClient's options, checked, with their defaults; `subscriber` as given (the client checks it against the connection). */
export interface ClientSettings {
  readonly keyPrefix: string;
  readonly watchdogTimeoutMs: number;
  readonly fairLockWaitTimeoutMs: number;
  readonly maxHoldTimeMs: number | undefined;
  readonly syncReplicas: ReplicaAck | undefined;
  readonly pubsub: 'auto' | 'sharded' | 'classic';
  readonly subscriber: unknown;
  readonly clientName: string | undefined;
  readonly renewalThread: RenewalThreadSettings | undefined;
}

/** Checks a LockClient's `options` for the connection `redis`. */
export function checkClientOptions(options: unknown, redis: RedisPort): ClientSettings {
  const raw = checkOptions(options, CLIENT_OPTIONS);
  const keyPrefix = raw.keyPrefix === undefined ? DEFAULTS.keyPrefix : checkKeyPrefix(raw.keyPrefix);
  const watchdogTimeoutMs =
    raw.watchdogTimeout === undefined ? DEFAULTS.watchdogTimeout : checkWatchdogTimeout(raw.watchdogTimeout);
  const fairLockWaitTimeoutMs =
    raw.fairLockWaitTimeout === undefined
      ? DEFAULTS.fairLockWaitTimeout
      : checkPositiveDuration(raw.fairLockWaitTimeout, 'fairLockWaitTimeout');
  const syncReplicas = replicaAck(raw.syncReplicas === undefined ? undefined : checkSyncReplicas(raw.syncReplicas));
  if (syncReplicas !== undefined && redis.replyTimeoutMs !== undefined && syncReplicas.timeoutMs >= redis.replyTimeoutMs) {
    throw new InvalidArgumentError(
      `\`syncReplicas.timeout\` (${syncReplicas.timeoutMs} ms) must be shorter than the client's own reply timeout (${redis.family} requestTimeout, ${redis.replyTimeoutMs} ms): the WAIT would time out`,
    );
  }
  const pubsub = raw.pubsub === undefined ? 'auto' : checkOneOf(raw.pubsub, 'pubsub', ['auto', 'sharded', 'classic'] as const);
  if (pubsub === 'sharded' && redis.deployment === 'cluster' && !redis.shardedPubSub) {
    throw new InvalidArgumentError(`\`pubsub: 'sharded'\` needs a client that keeps sharded subscriptions on a Cluster; ${redis.family} does not`);
  }
  const maxHoldTimeMs = checkMaxHoldTime(raw.maxHoldTime);
  const clientName = checkClientName(raw.clientName);
  const renewalThread = checkRenewalThread(raw.renewalThread, watchdogTimeoutMs);
  return { keyPrefix, watchdogTimeoutMs, fairLockWaitTimeoutMs, maxHoldTimeMs, syncReplicas, pubsub, subscriber: raw.subscriber, clientName, renewalThread };
}
