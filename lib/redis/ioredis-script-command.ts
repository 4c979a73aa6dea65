import type { Arg, LuaScript } from './port.js';
import { encodeCommand } from './resp-encode.js';

/** What rlock uses of ioredis' (or iovalkey's) `Command` (`Redis.Command`). */
interface IoCommand {
  name: string;
  args: unknown[];
  readonly promise: Promise<unknown>;
  toWritable(socket: object): unknown;
}
type CommandOptions = { keyPrefix?: string; replyEncoding: 'utf8' };
type IoCommandClass = new (name: string, args: unknown[], options: CommandOptions) => IoCommand;

interface CommandSender {
  sendCommand(command: IoCommand): Promise<unknown>;
}

/** A call of one of rlock's scripts: the script, and the socket it was last written to. */
interface ScriptCall extends IoCommand {
  script: LuaScript;
  sha: string;
  socket: object | undefined;
}

/** The scripts (by name) whose text each socket has been sent, as far as rlock knows. */
const loadedOn = new WeakMap<object, Set<string>>();

/** One call class per `Command` class (ioredis' and iovalkey's are two). */
const callClasses = new WeakMap<IoCommandClass, new (name: string, args: unknown[], options: CommandOptions) => ScriptCall>();

function callClassOf(Command: IoCommandClass): new (name: string, args: unknown[], options: CommandOptions) => ScriptCall {
  let ScriptCallClass = callClasses.get(Command);
  if (ScriptCallClass === undefined) {
    ScriptCallClass = class extends Command implements ScriptCall {
      script = undefined as unknown as LuaScript;
      socket: object | undefined = undefined;
      sha = '';
      /** Chooses EVAL or EVALSHA when written: the text the first time on a socket. */
      override toWritable(socket: object): unknown {
        let known = loadedOn.get(socket);
        if (known === undefined) loadedOn.set(socket, (known = new Set()));
        this.socket = socket;
        if (!known.has(this.script.name)) {
          known.add(this.script.name);
          this.name = 'eval';
          this.args[0] = this.script.lua;
        } else if (this.name === 'eval') {
          this.name = 'evalsha';
          this.args[0] = this.sha;
        }
        // One buffer, not ioredis' string concatenation (resp-encode.ts).
        return encodeCommand(this.name, this.args);
      }
    };
    callClasses.set(Command, ScriptCallClass);
  }
  return ScriptCallClass;
}

/**
 * Sends rlock's scripts on one ioredis or iovalkey connection by the rules of ioredis'
 * `defineCommand`: the text (EVAL) the first time on each socket, chosen when the call is
 * written, so that calls queued across a reconnect to a restarted server keep their order; the
 * SHA (EVALSHA) after that; NOSCRIPT (SCRIPT FLUSH) sends the call again, with its text. Not
 * `defineCommand` itself: it makes a `Command` subclass per script, and ioredis' Command
 * constructor, shared by every call of the process, slows down with every class it meets (a few
 * µs per call, docs/performance.md). Here every script shares one class.
 */
export class ScriptSender {
  readonly #conn: CommandSender;
  readonly #options: CommandOptions;
  readonly #Call: new (name: string, args: unknown[], options: CommandOptions) => ScriptCall;
  readonly #sha1: (text: string) => string;
  readonly #shas = new Map<string, string>();

  private constructor(conn: CommandSender, keyPrefix: string, Command: IoCommandClass, sha1: (text: string) => string) {
    this.#conn = conn;
    // As defineCommand's calls: keys with the connection's keyPrefix, replies as strings.
    this.#options = keyPrefix === '' ? { replyEncoding: 'utf8' } : { keyPrefix, replyEncoding: 'utf8' };
    this.#Call = callClassOf(Command);
    this.#sha1 = sha1;
  }

  /**
   * A sender for `conn` (a standalone or Sentinel `Redis`) once it has `defined` (a script
   * defined through `defineCommand`), or undefined where it is not the ioredis it knows. ioredis
   * exports `Command` as `Redis.Command`, but an instance's `constructor` is EventEmitter (a
   * mixin): the class is found as the parent of the defined script's own Command class.
   */
  static for(conn: object, defined: string, keyPrefix: string, sha1: (text: string) => string): ScriptSender | undefined {
    const scripts = (conn as { scriptsSet?: Record<string, { Command?: unknown } | undefined> }).scriptsSet;
    const own = scripts?.[defined]?.Command;
    const Command = typeof own === 'function' ? (Object.getPrototypeOf(own) as unknown) : undefined;
    if (typeof Command !== 'function' || typeof (conn as Partial<CommandSender>).sendCommand !== 'function') return undefined;
    return new ScriptSender(conn as CommandSender, keyPrefix, Command as IoCommandClass, sha1);
  }

  run(script: LuaScript, args: readonly Arg[]): Promise<unknown> {
    const call = this.#call(script, args);
    // sendCommand's own promise, not the call's: whoever wrapped sendCommand answers.
    return this.#conn.sendCommand(call).catch((error: unknown) => this.#noScript(error, call, args));
  }

  #call(script: LuaScript, args: readonly Arg[]): ScriptCall {
    const sha = this.#shaOf(script);
    // Nested: Command flattens its arguments into an array of its own anyway.
    const call = new this.#Call('evalsha', script.numberOfKeys === undefined ? [sha, args] : [sha, script.numberOfKeys, args], this.#options);
    call.script = script;
    call.sha = sha;
    return call;
  }

  /** NOSCRIPT: the call did not run; the socket is forgotten as loaded, and the call goes again. */
  #noScript(error: unknown, call: ScriptCall, args: readonly Arg[]): Promise<unknown> {
    if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error;
    if (call.socket !== undefined) loadedOn.get(call.socket)?.delete(call.script.name);
    return this.#conn.sendCommand(this.#call(call.script, args));
  }

  #shaOf(script: LuaScript): string {
    let sha = this.#shas.get(script.name);
    if (sha === undefined) this.#shas.set(script.name, (sha = this.#sha1(script.lua)));
    return sha;
  }
}
