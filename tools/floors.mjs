// The floors of lib/, lowest first. A module may import its own room and the floors below it,
// never a floor above, nor another room of its own floor. `npm run lint` checks it (eslint's
// no-restricted-imports, set up per room below); docs/architecture.md draws the same table.
// A room is a folder of lib/ (`holding/`) or one file (`core.ts`); a file named in a room of its
// own (`lease/adopt.ts`) is not in its folder's room.
export const FLOORS = [
  ['errors/'],
  ['errors.ts'],
  ['redis/'],
  ['options.ts', 'keys.ts', 'context.ts', 'events.ts', 'settle-within.ts'],
  ['validate.ts', 'unheard-warning.ts'],
  ['scripts/'],
  ['inspect/'],
  ['kinds.ts'],
  ['waiting/'],
  ['telemetry/'],
  ['holding/'],
  ['lease/', 'renewal-thread/'],
  ['core.ts'],
  ['owner-calls.ts'],
  ['locks/', 'synchronizers/', 'ops/'],
  ['leadership/'],
  ['lease/adopt.ts'],
  ['redlock/'],
  ['client.ts'],
  ['index.ts', 'cli/', 'otel/'],
];

const rooms = FLOORS.flatMap((floor, level) => floor.map((room) => ({ room, level })));
const isFolder = (room) => room.endsWith('/');
/** Rooms that are single files inside a folder room (`lease/adopt.ts`). */
const carvedOut = (folder) => rooms.filter(({ room }) => !isFolder(room) && room.startsWith(folder)).map(({ room }) => room);

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The import specifiers, as written in a module of `from`, that reach `to` (a regex source). */
function specifierOf(from, to) {
  const fromDir = isFolder(from) ? from : from.includes('/') ? from.slice(0, from.lastIndexOf('/') + 1) : '';
  const toPath = isFolder(to) ? to : to.replace(/\.ts$/, '.js');
  let relative;
  if (fromDir === '') relative = `./${toPath}`;
  else if (toPath.startsWith(fromDir)) relative = `./${toPath.slice(fromDir.length)}`;
  else relative = `../${toPath}`;
  return `^${escape(relative)}${isFolder(to) ? '' : '$'}`;
}

/** One eslint config block per room: the imports that would reach above its floor, or sideways. */
export function floorRules() {
  return rooms.map(({ room, level }) => {
    const files = isFolder(room) ? [`lib/${room}**/*.ts`] : [`lib/${room}`];
    const ignores = isFolder(room) ? carvedOut(room).map((file) => `lib/${file}`) : [];
    const banned = rooms.filter((other) => other.room !== room && (other.level > level || (other.level === level && !room.startsWith(other.room))));
    const patterns = banned
      // A folder room's own carved-out file is banned by its file pattern, not by the folder's.
      .filter((other) => !(isFolder(other.room) && room.startsWith(other.room)))
      .map((other) => ({
        regex: specifierOf(room, other.room),
        message:
          other.level > level
            ? `lib/${room} is on floor ${level}, lib/${other.room} on floor ${other.level}: a floor imports only its own room and the floors below (tools/floors.mjs).`
            : `lib/${room} and lib/${other.room} are rooms of one floor (${level}): they do not import each other (tools/floors.mjs).`,
      }));
    return { files, ignores, rules: { 'no-restricted-imports': ['error', { patterns }] } };
  });
}
