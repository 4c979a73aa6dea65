// Builds rlock's Lua commands: an entry file (lib/scripts/<name>-<key count>.lua) with its
// `--- @include "<path>"` lines replaced by the included files, resolved once per entry, and the
// command's name taken from a hash of the text that results. Plain JavaScript, so that every
// loader calls this one function: the tsup (esbuild) plugin, the vitest transform, and the Node
// loader hook (tools/lua-loader.mjs).
import { createHash } from 'node:crypto';
import process from 'node:process';
import { readFileSync } from 'node:fs';
import { basename, dirname, relative, resolve } from 'node:path';

/** An include line: `--- @include "<path relative to the including file>"`, alone on its line. */
const INCLUDE = /^---[ \t]*@include[ \t]+"([^"]+)"[ \t]*$/;
/** Marks an include that must run before anything else of its entry (see docs/performance.md). */
const PROLOGUE = /^---[ \t]*@prologue\b/m;
/** A line that runs nothing: blank, a comment, or the script's flags line. */
const INERT = /^\s*(--.*|#!lua.*)?$/;

/** A build error about a Lua file: the message names the file (relative to the working directory). */
export class LuaBundleError extends Error {
  constructor(file, message) {
    super(`${relative(process.cwd(), file) || file}: ${message}`);
    this.name = 'LuaBundleError';
    this.file = file;
  }
}

/**
 * The command of the entry file `entry`: its name, key count (undefined: the caller gives it as
 * the first argument) and resolved text, with every file read (for watch modes).
 * `read(path)` reads a file (the file system by default).
 */
export function bundleLua(entry, read = (path) => readFileSync(path, 'utf8')) {
  const file = resolve(entry);
  if (basename(dirname(file)) === 'includes') throw new LuaBundleError(file, 'an include is not a command: import an entry file');
  const state = { read, included: new Set(), stack: [], files: [] };
  // The text in pieces, each a run of lines of one file, so that a build can keep one copy of a
  // piece several commands share (luaEsbuildPlugin); joined, they are the command's text.
  const pieces = expand(file, state, true)
    .map(withoutComments)
    .filter((piece) => piece !== '');
  const lua = pieces.join('\n');
  const base = basename(file, '.lua');
  const keys = /-(\d+)$/.exec(base);
  const hash = createHash('sha1').update(lua).digest('hex').slice(0, 10);
  return { name: `rlock_${base.replaceAll('-', '_')}_${hash}`, numberOfKeys: keys ? Number(keys[1]) : undefined, lua, pieces, files: state.files };
}

/**
 * The text Redis runs: whole-line comments, blank lines and indentation left out (half the files'
 * text, inlined in both builds and sent with each first call). rlock's Lua has no long strings or
 * block comments, where a line's start would matter.
 */
function withoutComments(lua) {
  if (/\[=*\[/.test(lua)) throw new Error('a long string or block comment: the Lua would change if its lines were trimmed');
  return lua
    .split('\n')
    .map((line) => line.trimStart())
    .filter((line) => line !== '' && !line.startsWith('--'))
    .join('\n');
}

/** The JavaScript module a `.lua` import becomes: its command as the default export. */
export function luaModule(entry, read) {
  const { files, name, numberOfKeys, lua } = bundleLua(entry, read);
  return { code: `export default Object.freeze(${JSON.stringify({ name, numberOfKeys, lua })});\n`, files };
}

function readLua(file, state, from) {
  try {
    return state.read(file);
  } catch (error) {
    if (from === undefined) throw error;
    throw new LuaBundleError(from, `includes "${relative(dirname(from), file)}", which cannot be read (${error.code ?? error.message})`);
  }
}

function expand(file, state, isEntry, text = readLua(file, state)) {
  state.files.push(file);
  state.stack.push(file);
  let codeSeen = false;
  // Pieces: runs of this file's own lines, and the pieces of what it includes, in order.
  const pieces = [];
  let run = [];
  const endRun = () => {
    if (run.length > 0) pieces.push(run.join('\n'));
    run = [];
  };
  for (const line of text.split('\n')) {
    const include = INCLUDE.exec(line);
    if (!include) {
      if (line.startsWith('---') && /@include\b/.test(line)) throw new LuaBundleError(file, `malformed include line: ${line}`);
      if (!INERT.test(line)) codeSeen = true;
      run.push(line);
      continue;
    }
    const target = resolve(dirname(file), include[1]);
    if (state.stack.includes(target)) {
      const cycle = [...state.stack.slice(state.stack.indexOf(target)), target].map((f) => basename(f)).join(' -> ');
      throw new LuaBundleError(file, `include cycle: ${cycle}`);
    }
    // Include-once: a file already in this command is left out the second time.
    if (state.included.has(target)) {
      codeSeen = true;
      continue;
    }
    const included = readLua(target, state, file);
    if (PROLOGUE.test(included) && (!isEntry || codeSeen)) {
      throw new LuaBundleError(file, `"${include[1]}" is a prologue: only an entry may include it, before any code or other include`);
    }
    codeSeen = true;
    state.included.add(target);
    endRun();
    pieces.push(...expand(target, state, false, included));
  }
  endRun();
  state.stack.pop();
  return pieces;
}

/** The esbuild plugin (tsup's `esbuildPlugins`): a `.lua` import is its command. */
export function luaEsbuildPlugin() {
  return {
    name: 'rlock-lua',
    setup(build) {
      // A command's text is its pieces joined; each piece is a module of its own, named by its
      // text's hash, so a helper several commands include is in the build once, not once each.
      const pieces = new Map();
      build.onLoad({ filter: /\.lua$/ }, (args) => {
        const { files, pieces: texts, name, numberOfKeys } = bundleLua(args.path);
        const ids = texts.map((text) => {
          const id = createHash('sha1').update(text).digest('hex');
          pieces.set(id, text);
          return id;
        });
        const code = [
          ...ids.map((id, i) => `import p${i} from 'lua-piece:${id}';`),
          `export default Object.freeze({ name: ${JSON.stringify(name)}, numberOfKeys: ${JSON.stringify(numberOfKeys)}, lua: [${ids.map((_, i) => `p${i}`).join(', ')}].join('\\n') });`,
        ].join('\n');
        return { contents: code, loader: 'js', watchFiles: files };
      });
      build.onResolve({ filter: /^lua-piece:/ }, (args) => ({ path: args.path.slice('lua-piece:'.length), namespace: 'lua-piece' }));
      build.onLoad({ filter: /.*/, namespace: 'lua-piece' }, (args) => ({ contents: `export default ${JSON.stringify(pieces.get(args.path))};`, loader: 'js' }));
    },
  };
}
