// rlock observability: OpenTelemetry metrics exported to Prometheus. Runs a lock workload (see
// workload.ts) and serves its metrics on http://127.0.0.1:9464/metrics (PORT to change) until
// Ctrl-C, or for DURATION_S seconds. Point Prometheus at it and import dashboard.json in Grafana.
// Run: npm run example:observability  (Redis: REDIS_URL, 127.0.0.1:6379, or a redis-server from
// PATH started on a free port).
import { randomUUID } from 'node:crypto';
import { findRedis } from '../../tools/find-redis.js';
import { startObservabilityExample } from './workload.js';

const found = await findRedis();
const example = await startObservabilityExample({
  redisUrl: found.url,
  port: Number(process.env.PORT ?? 9464),
  keyPrefix: `rlock-observability-${randomUUID().slice(0, 8)}`,
});
console.log(`Redis: ${found.url} (${found.source}); metrics on ${example.metricsUrl}`);
const durationS = Number(process.env.DURATION_S ?? 0);
await new Promise<void>((resolve) => {
  process.once('SIGINT', resolve);
  if (durationS > 0) setTimeout(resolve, durationS * 1_000);
});
// What Prometheus would scrape now: the series' types (the full text is at the URL above).
const scraped = await (await fetch(example.metricsUrl)).text();
console.log(scraped.split('\n').filter((line) => line.startsWith('# TYPE rlock_')).join('\n'));
await example.stop();
await found.release();
