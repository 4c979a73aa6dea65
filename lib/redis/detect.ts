import { createHash } from 'node:crypto';
import { InvalidArgumentError } from '../errors.js';
import { GlidePort, isGlideCluster, isGlideLike, type GlideLike } from './glide-adapter.js';
import { GlidePubSub } from './glide-pubsub.js';
import { IoRedisPort, IoRedisPubSub, isIoRedisLike, type IoRedisLike } from './ioredis-adapter.js';
import { isNodeRedis6, isNodeRedisLike, nodeRedisDeployment, NodeRedisPort, type NodeRedisLike } from './node-redis-adapter.js';
import { NodeRedisPubSub } from './node-redis-pubsub.js';
import type { PubSubPort, RedisPort } from './port.js';

const sha1 = (text: string): string => createHash('sha1').update(text).digest('hex');

/** What a value is, for an error message: its class name, or its type. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return `a string ("${value.slice(0, 40)}")`;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return `${typeof value} ${value}`;
  if (typeof value !== 'object') return typeof value;
  const name = (value as { constructor?: { name?: string } }).constructor?.name;
  return name && name !== 'Object' ? `an object of class ${name}` : 'a plain object';
}

const SUPPORTED =
  'an ioredis or iovalkey Redis or Cluster, a connected node-redis 6 createClient(), createCluster() or createSentinel(), or a Valkey GLIDE GlideClient or GlideClusterClient';

/** node-redis 5 (or older): refused, naming the version to use instead (see isNodeRedis6). */
function assertNodeRedis6(conn: NodeRedisLike, what: string): void {
  if (isNodeRedis6(conn)) return;
  throw new InvalidArgumentError(
    `\`${what}\` is a node-redis 5 (or older) object: node-redis 5 is not supported, because after a reconnect it can hand a ` +
      'command another command\'s reply; use redis ^6 (@redis/client ^6)',
  );
}

/** Whether an ioredis connection is in subscriber mode (it can run no other command then). */
function ioSubscribed(conn: IoRedisLike): boolean {
  const condition = (conn as unknown as { condition?: { subscriber?: unknown } }).condition;
  return Boolean(condition?.subscriber);
}

/** GLIDE before 2.3 cannot subscribe after a client was made: notices need it. */
function assertGlide23(conn: GlideLike, what: string): void {
  if (typeof conn.subscribe === 'function') return;
  throw new InvalidArgumentError(`\`${what}\` is a Valkey GLIDE client older than 2.3, which cannot subscribe after it was made: use @valkey/valkey-glide ^2.3`);
}

/**
 * The port of the application's connection `value`, whichever supported client it comes from.
 * @throws InvalidArgumentError naming what it was given, for anything rlock cannot use.
 */
export function redisPortOf(value: unknown, what: string): RedisPort {
  if (typeof value === 'object' && value !== null) {
    if (isIoRedisLike(value)) {
      if (ioSubscribed(value)) {
        throw new InvalidArgumentError(`\`${what}\` is a connection in subscriber mode: it can run no script; pass a connection that has not subscribed`);
      }
      return new IoRedisPort(value, sha1);
    }
    if (isNodeRedisLike(value)) {
      assertNodeRedis6(value, what);
      if (!value.isOpen) {
        throw new InvalidArgumentError(`\`${what}\` is a node-redis client that is not open yet: \`await client.connect()\` before handing it to rlock`);
      }
      if (value.isPubSubActive === true && value.options?.RESP !== 3) {
        throw new InvalidArgumentError(`\`${what}\` is a node-redis client in subscriber mode (RESP2): it can run no script; pass a client that has not subscribed`);
      }
      const deployment = nodeRedisDeployment(value);
      if (deployment === 'pool') {
        throw new InvalidArgumentError(`\`${what}\` is a node-redis client pool: pass a createClient(), createCluster() or createSentinel() object`);
      }
      return new NodeRedisPort(value, deployment, sha1);
    }
    if (isGlideLike(value)) {
      assertGlide23(value, what);
      return new GlidePort(value);
    }
  }
  throw new InvalidArgumentError(`\`${what}\` must be ${SUPPORTED}; got ${describe(value)}`);
}

/** Makes the pub/sub port of a connection once the pub/sub mode (sharded or not) is known. */
export type PubSubFactory = (sharded: boolean) => PubSubPort;

/**
 * rlock's own pub/sub connection, opened from the application's: checked now where it can be.
 * @throws InvalidArgumentError when rlock cannot open one (a GLIDE client whose settings it cannot read).
 */
export function defaultSubscriber(main: RedisPort): PubSubFactory {
  if (main instanceof GlidePort) main.assertCanOpenPubSub();
  return (sharded) => main.openPubSub(sharded);
}

/** The family of a connection of any supported client, for an error message. */
function familyOf(value: object): string | undefined {
  if (isIoRedisLike(value)) return 'an ioredis/iovalkey connection';
  if (isNodeRedisLike(value)) return 'a node-redis client';
  if (isGlideLike(value)) return `a GLIDE ${isGlideCluster(value) ? 'GlideClusterClient' : 'GlideClient'}`;
  return undefined;
}

/** The application's GLIDE `subscriber`: of the same kind as the main client, made without a message callback. */
function glideSubscriberOf(value: GlideLike, main: RedisPort): PubSubFactory {
  assertGlide23(value, 'subscriber');
  if (isGlideCluster(value) !== (main.deployment === 'cluster')) {
    const [got, want] = main.deployment === 'cluster' ? ['GlideClient', 'GlideClusterClient'] : ['GlideClusterClient', 'GlideClient'];
    throw new InvalidArgumentError(`\`subscriber\` must be a GLIDE ${want}, like the main client; got a ${got}`);
  }
  if (value.config?.pubsubSubscriptions?.callback !== undefined) {
    throw new InvalidArgumentError(
      '`subscriber` is a GLIDE client made with a pubsubSubscriptions callback, which would get the notices instead of rlock: make it without one',
    );
  }
  return (sharded) => GlidePubSub.given(value, sharded);
}

/**
 * The application's own `subscriber` connection as rlock's pub/sub connection: it must come from
 * the same client family as the main connection. rlock never closes it.
 * @throws InvalidArgumentError for anything else.
 */
export function subscriberOf(value: unknown, main: RedisPort): PubSubFactory {
  if (typeof value === 'object' && value !== null) {
    if (isGlideLike(value) && main.family === 'glide') return glideSubscriberOf(value, main);
    if (isIoRedisLike(value) && (main.family === 'ioredis' || main.family === 'iovalkey')) return (sharded) => new IoRedisPubSub(value, false, sharded);
    if (isNodeRedisLike(value) && main.family === 'node-redis') {
      assertNodeRedis6(value, 'subscriber');
      if (!value.isOpen) {
        throw new InvalidArgumentError('`subscriber` is a node-redis client that is not open yet: `await subscriber.connect()` before handing it to rlock');
      }
      return (sharded) => new NodeRedisPubSub(value, false, sharded);
    }
    const family = familyOf(value);
    if (family !== undefined) {
      throw new InvalidArgumentError(`\`subscriber\` must come from the same client as the main connection (${main.family}); got ${family}`);
    }
  }
  throw new InvalidArgumentError(`\`subscriber\` must be ${SUPPORTED}, of the same client as the main connection; got ${describe(value)}`);
}
