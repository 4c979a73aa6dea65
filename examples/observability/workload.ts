// The observability example's moving parts: rlock instrumented with rlock/otel into an
// OpenTelemetry MeterProvider whose reader is the Prometheus exporter (an HTTP endpoint that
// Prometheus scrapes), and a workload that makes every instrument move: 9 workers on 3 clients
// contend for 3 locks (some give up), 4 share a semaphore of 2 permits, and every few seconds a
// nightly-report lock is lost because its key is deleted behind its holder's back.
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { Redis } from 'ioredis';
import { LockClient } from 'rlock';
import { instrumentLocks } from 'rlock/otel';

export interface ObservabilityExample {
  /** The Prometheus endpoint: `http://127.0.0.1:<port>/metrics`. */
  readonly metricsUrl: string;
  /** Stops the workload, the instrumentation and the endpoint. */
  stop(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const between = (low: number, high: number): number => low + Math.random() * (high - low);

export async function startObservabilityExample(options: { redisUrl: string; port: number; keyPrefix: string }): Promise<ObservabilityExample> {
  const exporter = new PrometheusExporter({ host: '127.0.0.1', port: options.port, preventServerStart: true });
  await exporter.startServer();
  const meterProvider = new MeterProvider({ readers: [exporter] });
  // Lock names hold ids (`inventory:2`): the attribute keeps only the part before the colon.
  const instrumentation = instrumentLocks({ meterProvider, lockName: (name) => name.split(':')[0] });

  const connections: Redis[] = [];
  const clients = Array.from({ length: 3 }, () => {
    const redis = new Redis(options.redisUrl);
    connections.push(redis);
    const locks = new LockClient(redis, { keyPrefix: options.keyPrefix, watchdogTimeout: 900 });
    locks.on('lost', () => undefined);
    locks.on('error', () => undefined);
    return locks;
  });
  const admin = new Redis(options.redisUrl);
  connections.push(admin);
  let running = true;

  const lockWorker = async (worker: number): Promise<void> => {
    const lock = clients[worker % 3]!.getLock(`inventory:${worker % 3}`);
    while (running) {
      const lease = await lock.acquire({ waitTime: 250 }).catch(() => undefined);
      if (lease) {
        await sleep(between(10, 80));
        await lease.release();
      }
      await sleep(between(0, 40));
    }
  };
  const permitWorker = async (worker: number): Promise<void> => {
    const exports = clients[worker % 3]!.getSemaphore('exports', { permits: 2 });
    while (running) {
      const permit = await exports.tryAcquire({ waitTime: 300 });
      if (permit) {
        await sleep(between(50, 150));
        await permit.release();
      }
      await sleep(between(0, 50));
    }
  };
  // Every 4 s a hold is lost: its key deleted while the watchdog keeps it (reason `deleted`).
  const loser = async (): Promise<void> => {
    const lock = clients[0]!.getLock('reports:nightly');
    while (running) {
      const lease = await lock.acquire();
      await sleep(500);
      await admin.del(`{${options.keyPrefix}:reports:nightly}`);
      await Promise.race([new Promise((resolve) => lease.signal.addEventListener('abort', resolve, { once: true })), sleep(3_000)]);
      await lease.release().catch(() => undefined);
      for (let waited = 0; running && waited < 3_500; waited += 100) await sleep(100);
    }
  };
  const workers = [
    ...Array.from({ length: 9 }, (_, i) => lockWorker(i)),
    ...Array.from({ length: 4 }, (_, i) => permitWorker(i)),
    loser(),
  ];

  return {
    metricsUrl: `http://127.0.0.1:${options.port}/metrics`,
    stop: async () => {
      running = false;
      await Promise.all(workers);
      instrumentation.disable();
      for (const locks of clients) await locks.close();
      for (const redis of connections) redis.disconnect();
      await meterProvider.shutdown();
    },
  };
}
