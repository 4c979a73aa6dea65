import fc from 'fast-check';
const describe = (_n: string, f: () => void): void => f(); const it = (_n: string, f: () => Promise<void>, _t?: number): void => { const t0 = Date.now(); f().then(() => console.log('passed in', Date.now() - t0, 'ms'), (e: unknown) => { console.log(String((e as Error).message ?? e)); console.log('CAUSE:', String(((e as Error).cause as Error)?.message)); console.log('failed after', Date.now() - t0, 'ms'); process.exitCode = 1; }); };
import { PendingRelease } from '../../lib/holding/pending-release.js';
import { REQUEST_SPAN, RequestWindow } from '../../lib/scripts/request-window.js';

/*
 * A model-based search of the client's request window (lib/scripts/request-window.ts) with the
 * held requests of releases retried in the background (lib/holding/pending-release.ts). Pure
 * client side: the "sends" are promises this file answers or loses, in an order fast-check's
 * scheduler picks. After every step the window's ids are checked against a reference model:
 *
 *   one-id       a call's copies all carry its one id (a held call's resends too)
 *   one-call     an id (its number on the key) belongs to one call, and never comes back
 *   tag          a call for another client's owner (or none) carries the client's tag
 *   covers       a call's gap reaches every call still in use (Redis keeps their entries)
 *   span         at most REQUEST_SPAN numbers in use on a key
 *   sent-in-use  no copy goes out of a request no longer in use (closed, its number free)
 *   low-advances a call's gap reaches no lower than needed (the low end moves on)
 *   no-stall     no send waits while its key has room
 *   resend-waits no send of a call waits once the call has its id (it needs no room)
 *
 * A call is in use from its id until every copy sent is settled and its caller sends it no more
 * (a one-shot call: at once; a held call: once finished). At the end everything is answered and
 * finished, and a fresh call on each key must start at once with gap 0.
 *
 * RLOCK_MODEL_SEED replays a search (fast-check prints the seed on failure); with RLOCK_MODEL_PATH
 * (its `path`) and RLOCK_MODEL_REPLAY (the commands' `replayPath`) it replays the shrunk run at once.
 * RLOCK_MODEL_RUNS sets the number of runs, RLOCK_MODEL_SKIP (comma-separated names above) turns
 * checks off, to see what a defect leads to further on.
 */

// ---------------------------------------------------------------------------------------------
// The adapter: the only code here that knows the implementation's API. For a new API, rewrite
// openWindow (and parseId if the id format changes); the model and the commands stay.

/** A copy's request as the runner (script-runner.ts) sees it (a new request type may be wrapped into this). */
interface Wire {
  readonly id: string;
  sending(): void;
  settled(): void;
}
type Send = (request: Wire) => Promise<unknown>;

/** A call's id in the window, as the model reads it. */
interface CallId {
  readonly seq: number;
  readonly gap: number;
  readonly tagged: boolean;
}

const CLIENT = 'me';

function parseId(id: string): CallId | undefined {
  const match = /^(me:)?([0-9a-z]+)\/([0-9a-z]+)$/.exec(id);
  if (match === null) return undefined;
  return { tagged: match[1] !== undefined, seq: parseInt(match[2]!, 36), gap: parseInt(match[3]!, 36) };
}

/** What the model drives. `H` is the implementation's handle of a held call. */
interface WindowUnderTest<H> {
  /** A call sent once (acquire, extend, forceUnlock, ...). */
  call(key: string, owner: string | undefined, send: Send): Promise<unknown>;
  /** A release that may be sent again: a new handle, before its first send. */
  hold(key: string, owner: string | undefined): H;
  /** A send of the held call (its first, a background retry, or `release()` again). */
  resend(handle: H, key: string, owner: string | undefined, send: Send): Promise<unknown>;
  /**
   * Its caller sends it no more (PendingRelease.finish), `why`: Redis answered a copy, or its
   * retries stopped unanswered (the lease ran out, the client closed). May come twice.
   */
  finish(handle: H, why: 'answered' | 'stopped'): void;
}

function openWindow(): WindowUnderTest<PendingRelease> {
  const window = new RequestWindow(CLIENT);
  return {
    call: (key, owner, send) => window.send(key, owner, send),
    hold: () => new PendingRelease(0, false),
    resend: (held, key, owner, send) => window.send(key, owner, send, held),
    finish: (held) => held.finish(),
  };
}

type Held = ReturnType<typeof openWindow> extends WindowUnderTest<infer H> ? H : never;

// ---------------------------------------------------------------------------------------------
// The reference model.

interface Call {
  /** Its number in the run, for messages. */
  readonly n: number;
  readonly key: string;
  readonly owner: string | undefined;
  readonly handle: Held | undefined;
  /** The numbers its copies went out with: one, once it was sent (more is a defect). */
  readonly numbers: Num[];
  /** Its caller sends it no more: a one-shot call at once, a held call once finished. */
  finished: boolean;
}

/** A number given on a key, and the call it was given to. */
interface Num {
  readonly id: string;
  readonly seq: number;
  readonly gap: number;
  readonly call: Call;
  /** The step its first copy went out. */
  readonly step: number;
  /** Copies sent with it and not settled. */
  inFlight: number;
}

interface Copy {
  readonly n: number;
  readonly num: Num;
  readonly request: Wire;
  /** out: nothing decided; answer / lose: decided, its reply scheduled; done: delivered. */
  fate: 'out' | 'answer' | 'lose' | 'done';
  /** The caller finishes its call on this answer (attempt() in release-hold.ts). */
  finishOnAnswer: boolean;
  resolve(copy: Copy): void;
  reject(error: Error): void;
}

/** One window.send: waiting until its send callback runs (or it fails without one). */
interface Sending {
  readonly call: Call;
  started: boolean;
  over: boolean;
}

class Violation extends Error {}

/** A line of a run's story; runs of entries of one `bulk` kind (one-shot calls' copies and replies) are told in short. */
type Entry = string | { readonly bulk: string; readonly text: string };

function story(log: readonly Entry[]): string[] {
  const lines: string[] = [];
  for (let i = 0; i < log.length; ) {
    const entry = log[i]!;
    if (typeof entry === 'string') {
      lines.push(entry);
      i += 1;
      continue;
    }
    let end = i + 1;
    while (end < log.length && typeof log[end] !== 'string' && (log[end] as { bulk: string }).bulk === entry.bulk) end += 1;
    const last = log[end - 1] as { text: string };
    lines.push(end - i <= 2 ? entry.text : `${entry.text}\n      ... ${end - i - 2} more ...\n    ${last.text}`);
    if (end - i === 2) lines.push(last.text);
    i = end;
  }
  return lines.slice(-60);
}

class Model {
  readonly calls: Call[] = [];
  readonly copies: Copy[] = [];
  readonly sendings: Sending[] = [];
  /** Per key: every number given. */
  readonly numbers = new Map<string, Map<number, Num>>();
  step = 0;
  /** Per key: the lowest number in use when the step started. */
  floor = new Map<string, number>();
  /** The first check that failed: thrown at the end of its step (a throw inside a send callback would be the window's to catch). */
  violation: Violation | undefined = undefined;

  constructor(
    readonly skip: ReadonlySet<string>,
    readonly log: Entry[],
  ) {}

  check(ok: boolean, name: string, message: () => string): void {
    if (ok || this.skip.has(name) || this.violation !== undefined) return;
    this.violation = new Violation(`${name}: ${message()}\n  steps:\n    ${story(this.log).join('\n    ')}`);
  }

  /** A number is in use until every copy sent with it is settled and its call's caller sends it no more. */
  inUse(num: Num): boolean {
    return num.inFlight > 0 || !num.call.finished;
  }

  inUseOn(key: string): Num[] {
    return [...(this.numbers.get(key)?.values() ?? [])].filter((num) => this.inUse(num));
  }

  held(): Call[] {
    return this.calls.filter((call) => call.handle !== undefined);
  }

  /** The send callback of `call`: its copy goes out with `request`. */
  sent(call: Call, request: Wire): Num {
    const id = request.id;
    this.log.push(call.handle === undefined ? { bulk: 'out', text: `  copy of call ${call.n} goes out as ${id}` } : `  copy of held call ${call.n} goes out as ${id}`);
    const parsed = parseId(id) ?? { seq: NaN, gap: NaN, tagged: false };
    this.check(!Number.isNaN(parsed.seq), 'one-id', () => `call ${call.n} sent with a malformed id ${id}`);
    const { seq, gap, tagged } = parsed;
    const expectTag = call.owner === undefined || !call.owner.startsWith(`${CLIENT}:`);
    this.check(tagged === expectTag, 'tag', () => `call ${call.n} (owner ${call.owner}) sent as ${id}`);
    const first = call.numbers[0];
    this.check(first === undefined || first.id === id, 'one-id', () => `call ${call.n} was sent as ${first!.id}, now as ${id}`);
    const numbers = this.numbers.get(call.key) ?? new Map<number, Num>();
    this.numbers.set(call.key, numbers);
    const known = numbers.get(seq);
    if (known !== undefined) {
      this.check(known.call === call, 'one-call', () => `${id} on key ${call.key} is call ${call.n}'s, and was call ${known.call.n}'s (${known.id})`);
      this.check(known.call !== call || this.inUse(known), 'sent-in-use', () => `call ${call.n} is sent again as ${id} after that number stopped being in use`);
      return known;
    }
    this.check(gap <= seq - 1 && gap < REQUEST_SPAN, 'span', () => `call ${call.n} got ${id}: gap ${gap} at number ${seq}`);
    for (const other of this.inUseOn(call.key)) {
      if (other.seq > seq) continue;
      this.check(seq - gap <= other.seq, 'covers', () => `call ${call.n} got ${id}, its gap does not reach ${other.id} (call ${other.call.n}), still in use`);
      this.check(seq - other.seq < REQUEST_SPAN, 'span', () => `call ${call.n} got ${id} while ${other.id} (call ${other.call.n}) is in use`);
    }
    const num: Num = { id, seq, gap, call, step: this.step, inFlight: 0 };
    numbers.set(seq, num);
    call.numbers.push(num);
    return num;
  }

  startStep(what: string): void {
    this.step += 1;
    this.log.push(what);
    this.floor = new Map();
    for (const [key, numbers] of this.numbers) {
      for (const num of numbers.values()) if (this.inUse(num)) this.floor.set(key, Math.min(this.floor.get(key) ?? Infinity, num.seq));
    }
  }

  /** After a step, all its continuations run: the checks that need the window at rest. */
  endStep(): void {
    for (const [key, numbers] of this.numbers) {
      const given = [...numbers.values()];
      for (const num of given) {
        if (num.step !== this.step) continue;
        // Numbers in use when the step started, or given during it below this one, may be in its gap.
        let floor = Math.min(this.floor.get(key) ?? Infinity, num.seq);
        for (const other of given) if (other.step === this.step && other.seq < floor) floor = other.seq;
        this.check(num.seq - num.gap >= floor, 'low-advances', () => `call ${num.call.n} got ${num.id}: its gap reaches below ${floor}, the oldest number it could need`);
      }
    }
    for (const key of new Set(this.calls.map((call) => call.key))) {
      const waiting = this.sendings.filter((sending) => sending.call.key === key && !sending.started && !sending.over);
      if (waiting.length === 0) continue;
      for (const { call } of waiting) this.check(call.numbers.length === 0, 'resend-waits', () => `a send of call ${call.n} waits, though the call has its id ${call.numbers[0]!.id}`);
      const inUse = this.inUseOn(key).map((num) => num.seq);
      const next = Math.max(0, ...(this.numbers.get(key)?.keys() ?? [])) + 1;
      const room = inUse.length === 0 || next - Math.min(...inUse) < REQUEST_SPAN;
      this.check(!room, 'no-stall', () => `${waiting.length} send(s) on key ${key} wait, with ${inUse.length} numbers in use from ${Math.min(...inUse)}`);
    }
    if (this.violation !== undefined) throw this.violation;
  }
}

// ---------------------------------------------------------------------------------------------
// The system under test, its sends answered through the scheduler.

interface Real {
  readonly window: WindowUnderTest<Held>;
  readonly scheduler: fc.Scheduler;
}

/** Lets every continuation run (the window's own included), without releasing scheduled replies. */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** The send callback of `call`, as the runner (script-runner.ts) does it: `sending`, the copy goes out, `settled` once it answers or fails. */
function sendOf(m: Model, call: Call, refuse: boolean): Send {
  return (request) => {
    if (refuse) {
      // Refused before anything went out (the runner never told `sending`): the id was given, though.
      m.sent(call, request);
      throw new Error('refused before sent');
    }
    try {
      request.sending();
    } catch (error) {
      // The request would not go (a closed one): nothing is sent, the call fails (the runner settles it, as here).
      m.log.push(`  a send of call ${call.n} is refused by its request: ${(error as Error).message}`);
      request.settled();
      throw error;
    }
    const num = m.sent(call, request);
    num.inFlight += 1;
    return new Promise<Copy>((resolve, reject) => {
      m.copies.push({ n: m.copies.length + 1, num, request, fate: 'out', finishOnAnswer: false, resolve, reject });
    });
  };
}

/** Sends `call` once more (its first send too); the caller of a held call finishes it when told to on an answer. */
function send(m: Model, r: Real, call: Call, refuse: boolean): void {
  const sending: Sending = { call, started: false, over: false };
  m.sendings.push(sending);
  const send = sendOf(m, call, refuse);
  const started: Send = (request) => {
    sending.started = true;
    return send(request);
  };
  const out = call.handle === undefined ? r.window.call(call.key, call.owner, started) : r.window.resend(call.handle, call.key, call.owner, started);
  out.then(
    (copy) => {
      sending.over = true;
      if ((copy as Copy).finishOnAnswer) finish(m, r, call, 'answered');
    },
    () => {
      sending.over = true;
    },
  );
}

function finish(m: Model, r: Real, call: Call, why: 'answered' | 'stopped'): void {
  m.log.push(`  call ${call.n} finished${call.finished ? ' again' : ''} (${why})`);
  call.finished = true;
  r.window.finish(call.handle!, why);
}

/** The reply of `copy` arrives: the runner settles it, then its caller has the answer. */
function deliver(m: Model, copy: Copy): void {
  const what = `reply of copy ${copy.n} (${copy.num.id}, ${copy.num.call.handle === undefined ? '' : 'held '}call ${copy.num.call.n}) arrives: ${copy.fate}`;
  m.log.push(copy.num.call.handle === undefined ? { bulk: `reply ${copy.fate}`, text: `  ${what}` } : `  ${what}`);
  const fate = copy.fate;
  copy.fate = 'done';
  copy.num.inFlight -= 1;
  copy.request.settled();
  if (fate === 'answer') copy.resolve(copy);
  else copy.reject(new Error('lost'));
}

type Command = fc.AsyncCommand<Model, Real, false>;

/** Each command is a step: run, let continuations run, check. */
abstract class Step implements Command {
  abstract check(m: Readonly<Model>): boolean;
  abstract toString(): string;
  protected abstract act(m: Model, r: Real): Promise<void> | void;
  async run(m: Model, r: Real): Promise<void> {
    m.startStep(this.toString());
    await this.act(m, r);
    await settle();
    m.endStep();
  }
}

const KEYS = ['a', 'b'] as const;
const OWNERS = [`${CLIENT}:1`, `${CLIENT}:2`, 'other:1', undefined] as const;

/** `count` one-shot calls of `owner` on `key` at once. */
class CallCommand extends Step {
  constructor(
    readonly key: string,
    readonly owner: string | undefined,
    readonly count: number,
    readonly refuse: boolean,
  ) {
    super();
  }
  check(): boolean {
    return true;
  }
  toString(): string {
    return `call ×${this.count} on ${this.key} for ${this.owner}${this.refuse ? ' (refused)' : ''}`;
  }
  act(m: Model, r: Real): void {
    for (let i = 0; i < this.count; i += 1) {
      const call: Call = { n: m.calls.length + 1, key: this.key, owner: this.owner, handle: undefined, numbers: [], finished: true };
      m.calls.push(call);
      send(m, r, call, this.refuse && i === 0);
    }
  }
}

/** A release that will be retried: its first send. */
class HoldCommand extends Step {
  constructor(
    readonly key: string,
    readonly owner: string | undefined,
    readonly refuse: boolean,
  ) {
    super();
  }
  check(): boolean {
    return true;
  }
  toString(): string {
    return `held call on ${this.key} for ${this.owner}${this.refuse ? ' (refused)' : ''}`;
  }
  act(m: Model, r: Real): void {
    const call: Call = { n: m.calls.length + 1, key: this.key, owner: this.owner, handle: r.window.hold(this.key, this.owner), numbers: [], finished: false };
    m.calls.push(call);
    m.log.push(`  is call ${call.n}`);
    send(m, r, call, this.refuse);
  }
}

/** A held call (not finished) sent again: a background retry, or `release()` again. */
class ResendCommand extends Step {
  constructor(
    readonly pick: number,
    readonly refuse: boolean,
  ) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return m.held().some((call) => !call.finished);
  }
  toString(): string {
    return `resend held call #${this.pick}${this.refuse ? ' (refused)' : ''}`;
  }
  act(m: Model, r: Real): void {
    const open = m.held().filter((call) => !call.finished);
    const call = open[this.pick % open.length]!;
    m.log.push(`  is call ${call.n}`);
    send(m, r, call, this.refuse);
  }
}

/** Redis answers a copy, or it is lost: its reply is scheduled, to arrive when the scheduler says. */
class ReplyCommand extends Step {
  constructor(
    readonly pick: number,
    readonly fate: 'answer' | 'lose',
    readonly finishOnAnswer: boolean,
  ) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return m.copies.some((copy) => copy.fate === 'out');
  }
  toString(): string {
    return `${this.fate} copy #${this.pick}${this.finishOnAnswer && this.fate === 'answer' ? ' (its caller finishes on it)' : ''}`;
  }
  act(m: Model, r: Real): void {
    const out = m.copies.filter((copy) => copy.fate === 'out');
    const copy = out[this.pick % out.length]!;
    copy.fate = this.fate;
    copy.finishOnAnswer = this.fate === 'answer' && this.finishOnAnswer && copy.num.call.handle !== undefined;
    m.log.push(`  is copy ${copy.n} (${copy.num.id}, call ${copy.num.call.n})`);
    void r.scheduler.schedule(Promise.resolve(), `${this.fate} ${copy.num.id} (call ${copy.num.call.n})`).then(() => deliver(m, copy));
  }
}

/** Time passes: `count` scheduled replies arrive (all when undefined), in the scheduler's order. */
class TickCommand extends Step {
  constructor(readonly count: number | undefined) {
    super();
  }
  check(): boolean {
    return true;
  }
  toString(): string {
    return `time passes: ${this.count ?? 'all'} repl${this.count === 1 ? 'y arrives' : 'ies arrive'}`;
  }
  async act(_m: Model, r: Real): Promise<void> {
    const count = Math.min(this.count ?? Infinity, r.scheduler.count());
    if (count > 0) await r.scheduler.waitNext(count);
  }
}

/** The caller of a held call sends it no more (answered elsewhere, or its retries stopped); maybe again. */
class FinishCommand extends Step {
  constructor(
    readonly pick: number,
    readonly why: 'answered' | 'stopped',
  ) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return m.held().length > 0;
  }
  toString(): string {
    return `finish held call #${this.pick} (${this.why})`;
  }
  act(m: Model, r: Real): void {
    const held = m.held();
    finish(m, r, held[this.pick % held.length]!, this.why);
  }
}

const key = fc.constantFrom(...KEYS);
const owner = fc.constantFrom(...OWNERS);
const pick = fc.nat({ max: 15 });
// True one time in ten; shrinks to false.
const rarely = fc.integer({ min: 0, max: 9 }).map((n) => n === 9);
const reply = fc.tuple(pick, fc.constantFrom('answer' as const, 'lose' as const), fc.boolean()).map(([p, f, e]) => new ReplyCommand(p, f, e));
const commands = fc.commands<Model, Real, false>(
  [
    fc.tuple(key, owner, fc.oneof(fc.constant(1), fc.integer({ min: 2, max: 8 }), fc.integer({ min: REQUEST_SPAN - 8, max: REQUEST_SPAN + 6 })), rarely).map(([k, o, n, f]) => new CallCommand(k, o, n, f)),
    fc.tuple(key, owner, rarely).map(([k, o, f]) => new HoldCommand(k, o, f)),
    fc.tuple(pick, rarely).map(([p, f]) => new ResendCommand(p, f)),
    // Twice: replies are the commonest event.
    reply,
    reply,
    fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }).map((n) => new TickCommand(n)),
    fc.tuple(pick, fc.constantFrom('stopped' as const, 'answered' as const)).map(([p, w]) => new FinishCommand(p, w)),
  ],
  { maxCommands: 60, size: 'medium', ...(process.env.RLOCK_MODEL_REPLAY !== undefined ? { replayPath: process.env.RLOCK_MODEL_REPLAY } : {}) },
);

/** Answers everything, finishes every held call, then a fresh call on each key must start at once with gap 0. */
async function drain(m: Model, r: Real): Promise<void> {
  for (let round = 0; round < 10; round += 1) {
    m.startStep(`drain, round ${round + 1}: every held call finished, every copy answered`);
    for (const call of m.held()) if (!call.finished) finish(m, r, call, 'stopped');
    for (const copy of m.copies) {
      if (copy.fate !== 'out') continue;
      copy.fate = 'answer';
      void r.scheduler.schedule(Promise.resolve(), `answer ${copy.num.id} (call ${copy.num.call.n})`).then(() => deliver(m, copy));
    }
    await r.scheduler.waitIdle();
    await settle();
    m.endStep();
    if (m.copies.every((copy) => copy.fate === 'done') && m.sendings.every((s) => s.started || s.over)) break;
  }
  const keys = new Set(m.calls.map((call) => call.key));
  if (keys.size === 0) return;
  m.startStep('drain: a fresh call on each key');
  const probes = [...keys].map((k) => {
    const call: Call = { n: m.calls.length + 1, key: k, owner: OWNERS[0], handle: undefined, numbers: [], finished: true };
    m.calls.push(call);
    send(m, r, call, false);
    return call;
  });
  await settle();
  m.endStep();
  for (const call of probes) m.check(call.numbers[0]?.gap === 0, 'low-advances', () => `with nothing in use, a fresh call on ${call.key} got ${call.numbers[0]?.id}`);
  if (m.violation !== undefined) throw m.violation;
}

const env = process.env;
const runs = Number(env.RLOCK_MODEL_RUNS ?? 3000);

describe('request window, model-based', () => {
  it('keeps one id per call, closes each request once, and moves on once the calls below settle', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), commands, async (scheduler, cmds) => {
        const log: Entry[] = [];
        const m = new Model(new Set((env.RLOCK_MODEL_SKIP ?? '').split(',').filter(Boolean)), log);
        const r: Real = { window: openWindow(), scheduler };
        await fc.asyncModelRun(() => ({ model: m, real: r }), cmds);
        await drain(m, r);
      }),
      {
        numRuns: runs,
        ...(env.RLOCK_MODEL_SEED !== undefined ? { seed: Number(env.RLOCK_MODEL_SEED) } : {}),
        ...(env.RLOCK_MODEL_PATH !== undefined ? { path: env.RLOCK_MODEL_PATH } : {}),
      },
    );
  }, 120_000);
});
