import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startObservabilityExample, type ObservabilityExample } from '../../examples/observability/workload.js';
import { sharedRedisUrl, until } from '../helpers/fixtures.js';

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

describe('examples/observability', () => {
  let example: ObservabilityExample | undefined;
  afterEach(async () => {
    await example?.stop();
    example = undefined;
  });

  it("serves rlock's metrics on its Prometheus endpoint (a real HTTP scrape)", async () => {
    example = await startObservabilityExample({ redisUrl: sharedRedisUrl(), port: await freePort(), keyPrefix: `rlt-${randomUUID().slice(0, 8)}` });
    let scraped = '';
    // The workload loses a hold about a second in; by then every instrument has moved.
    await until(async () => {
      const response = await fetch(example!.metricsUrl);
      expect(response.status).toBe(200);
      scraped = await response.text();
      return scraped.includes('rlock_lost_total{');
    }, 10_000);
    for (const type of [
      '# TYPE rlock_acquire_duration histogram',
      '# TYPE rlock_hold_duration histogram',
      '# TYPE rlock_holds_active gauge',
      '# TYPE rlock_waiters_active gauge',
      '# TYPE rlock_lost_total counter',
    ]) {
      expect(scraped).toContain(type);
    }
    expect(scraped).toMatch(/rlock_acquire_duration_bucket\{rlock_lock_kind="lock",rlock_lock_name="inventory",rlock_acquire_outcome="acquired",otel_scope_name="rlock",le="\+Inf"\} [1-9]/);
    expect(scraped).toMatch(/rlock_holds_active\{rlock_lock_kind="semaphore",rlock_lock_name="exports",otel_scope_name="rlock"\} [0-2]\b/);
    expect(scraped).toMatch(/rlock_lost_total\{rlock_lost_reason="deleted",rlock_lock_name="reports",otel_scope_name="rlock"\} [1-9]/);
    // The option maps names to their first part: no lock id reaches a label.
    expect(scraped).not.toMatch(/inventory:\d|reports:nightly/);
    // Every series the Grafana dashboard queries is one the endpoint serves (renewal failures
    // appear once one happened, which this workload never makes).
    const dashboard = readFileSync(new URL('../../examples/observability/dashboard.json', import.meta.url), 'utf8');
    const labels = new Set(['rlock_lock_kind', 'rlock_lock_name', 'rlock_acquire_outcome', 'rlock_hold_outcome', 'rlock_lost_reason']);
    const names = [...dashboard.matchAll(/\b(rlock_[a-z_]+?)(?:_bucket|_count|_sum)?\b/g)].map((m) => m[1]!);
    const queried = new Set(names.filter((name) => !labels.has(name)));
    expect([...queried].sort()).toEqual(['rlock_acquire_duration', 'rlock_hold_duration', 'rlock_holds_active', 'rlock_lost_total', 'rlock_renewal_failures_total', 'rlock_waiters_active']);
    for (const name of queried) if (name !== 'rlock_renewal_failures_total') expect(scraped).toContain(`# TYPE ${name} `);
  });
});
