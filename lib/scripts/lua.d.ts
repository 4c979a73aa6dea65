// A Lua entry file imported from TypeScript is its command, built by tools/lua-bundle.mjs (the
// tsup plugin, the vitest transform and the Node loader hook all call it): its includes resolved,
// its name taken from a hash of the resolved text, its key count from the file name.
declare module '*.lua' {
  const command: {
    /** `rlock_<entry>_<hash>`: two texts never share a name, so two rlock copies on one connection never swap them. */
    readonly name: string;
    /** From `<name>-<key count>.lua`; undefined when the caller gives it as the first argument. */
    readonly numberOfKeys: number | undefined;
    readonly lua: string;
  };
  export default command;
}
