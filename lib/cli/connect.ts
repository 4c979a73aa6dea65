import { UsageError } from './errors.js';

/** A host and port. */
export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** Connection settings parsed from `--url`, named as ioredis names them (the opener translates them for other clients). */
export interface ConnectOptions {
  host?: string;
  port?: number;
  db?: number;
  username?: string;
  password?: string;
  tls?: object;
  sentinels?: HostPort[];
  name?: string;
  sentinelPassword?: string;
  enableTLSForSentinelMode?: boolean;
  sentinelTLS?: object;
}

/** Where to connect, parsed from `--url` (and `--cluster`). */
export type Target =
  | { readonly kind: 'standalone'; readonly options: ConnectOptions; readonly display: string }
  | { readonly kind: 'sentinel'; readonly options: ConnectOptions; readonly display: string }
  | { readonly kind: 'cluster'; readonly seeds: HostPort[]; readonly options: ConnectOptions; readonly display: string };

const URL_FORM = /^(redis|rediss|redis\+sentinel|rediss\+sentinel):\/\/(?:([^@/]*)@)?([^/?#]*)(\/[^?#]*)?(?:\?([^#]*))?$/;

function hostPort(text: string, defaultPort: number, url: string): { host: string; port: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  const plain = /^([^:[\]]+)(?::(\d+))?$/.exec(text);
  const match = bracketed ?? plain;
  if (!match || match[1] === '') throw new UsageError(`bad --url "${url}": "${text}" is no host[:port]`);
  const port = match[2] === undefined ? defaultPort : Number(match[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new UsageError(`bad --url "${url}": bad port in "${text}"`);
  return { host: match[1]!, port };
}

function dbOf(text: string | undefined, url: string): number | undefined {
  if (text === undefined || text === '') return undefined;
  if (!/^\d+$/.test(text)) throw new UsageError(`bad --url "${url}": the database must be a number, got "${text}"`);
  return Number(text);
}

/**
 * Parses `--url`:
 * - `redis://[[user]:password@]host[:port][/db]`, `rediss://…` (TLS);
 * - `redis+sentinel://[[user]:password@]host[:port][,host[:port]…]/master-name[/db]` (the
 *   password is the master's; `?sentinelPassword=…` for the Sentinels'), `rediss+sentinel://…`;
 * - with `cluster`: `redis://[[user]:password@]host[:port][,host[:port]…]` lists Cluster seeds.
 */
export function parseTarget(url: string, cluster: boolean): Target {
  const match = URL_FORM.exec(url);
  if (!match) {
    throw new UsageError(
      `bad --url "${url}": expected redis://host:port[/db], rediss://…, or redis+sentinel://host:port[,host:port]/master-name`,
    );
  }
  const [, scheme, auth, hostList, path, query] = match as unknown as [string, string, string | undefined, string, string | undefined, string | undefined];
  const options: ConnectOptions = {};
  if (auth !== undefined) {
    const colon = auth.indexOf(':');
    const user = colon === -1 ? '' : decodeURIComponent(auth.slice(0, colon));
    const password = decodeURIComponent(colon === -1 ? auth : auth.slice(colon + 1));
    if (user) options.username = user;
    if (password) options.password = password;
  }
  if (scheme.startsWith('rediss')) options.tls = {};
  const sentinel = scheme.includes('sentinel');
  const hosts = hostList.split(',').filter(Boolean).map((text) => hostPort(text, sentinel ? 26_379 : 6379, url));
  if (hosts.length === 0) throw new UsageError(`bad --url "${url}": no host`);
  const segments = (path ?? '').split('/').filter(Boolean).map(decodeURIComponent);
  const display = url.replace(/\/\/[^@/]*@/, '//***@');
  if (sentinel) {
    if (cluster) throw new UsageError('--cluster cannot be combined with a redis+sentinel:// URL');
    const [name, db] = segments;
    if (name === undefined) throw new UsageError(`bad --url "${url}": a Sentinel URL names the master: redis+sentinel://host:port/master-name`);
    const params = new URLSearchParams(query ?? '');
    const sentinelPassword = params.get('sentinelPassword') ?? undefined;
    const database = dbOf(db, url);
    return {
      kind: 'sentinel',
      display,
      options: {
        ...options,
        sentinels: hosts,
        name,
        ...(database === undefined ? {} : { db: database }),
        ...(sentinelPassword ? { sentinelPassword } : {}),
        ...(options.tls ? { enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
      },
    };
  }
  if (cluster) {
    if (segments.length > 0) throw new UsageError(`bad --url "${url}": a Cluster has no database number`);
    return { kind: 'cluster', seeds: hosts, options, display };
  }
  if (hosts.length > 1) throw new UsageError(`bad --url "${url}": several hosts need --cluster (or a redis+sentinel:// URL)`);
  if (segments.length > 1) throw new UsageError(`bad --url "${url}": the path is the database number only`);
  const database = dbOf(segments[0], url);
  return { kind: 'standalone', display, options: { ...options, ...hosts[0]!, ...(database === undefined ? {} : { db: database }) } };
}
