// Types of lua-bundle.mjs, for the TypeScript files that import it (build configs, specs).

/** One command as the build makes it. */
export interface LuaCommand {
  /** `rlock_<entry>_<first 10 hex digits of the SHA-1 of lua>`. */
  readonly name: string;
  /** From the entry's name (`<name>-<key count>.lua`); undefined: the first argument gives it. */
  readonly numberOfKeys: number | undefined;
  /** The entry with its includes resolved. */
  readonly lua: string;
}

export declare class LuaBundleError extends Error {
  readonly file: string;
}

export declare function bundleLua(entry: string, read?: (path: string) => string): LuaCommand & { readonly files: string[] };
export declare function luaModule(entry: string, read?: (path: string) => string): { code: string; files: string[] };
export declare function luaEsbuildPlugin(): { name: string; setup(build: unknown): void };
