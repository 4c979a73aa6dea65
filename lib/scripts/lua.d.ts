// Lua scripts are imported as their source text (tsup `loader: { '.lua': 'text' }`).
declare module '*.lua' {
  const source: string;
  export default source;
}
