import type { Redis } from 'ioredis';
import { redisPortOf } from '../../lib/redis/detect.js';
import { LockScripts } from '../../lib/scripts/registry.js';
import type { LockFixture } from './fixtures.js';

/** A connection of the test and the script registry on it, for calling the scripts directly. */
export function directScripts(fx: LockFixture): { redis: Redis; scripts: LockScripts } {
  const redis = fx.redis();
  return { redis, scripts: new LockScripts(redisPortOf(redis, 'redis'), 'spec') };
}

/** Subscribes to `channels` on a connection of its own; collects [channel, message] per message heard. */
export async function listenTo(fx: LockFixture, channels: string[]): Promise<[string, string][]> {
  const sub = fx.redis();
  const heard: [string, string][] = [];
  sub.on('message', (channel: string, message: string) => heard.push([channel, message]));
  await sub.subscribe(...channels);
  return heard;
}
