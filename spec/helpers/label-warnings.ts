import { relative } from 'node:path';
import { expect } from 'vitest';

// rlock's own process warnings (type RLockWarning) are part of what the suite tests: specs lose
// locks and fail renewals with clients that do not listen, and run servers with an evicting
// maxmemory-policy. Each one a test causes is printed with the test it came from, so the output
// says why it is there.
const emitWarning = process.emitWarning.bind(process) as (warning: string | Error, ...rest: unknown[]) => void;

process.emitWarning = (warning: string | Error, ...rest: unknown[]): void => {
  const options = rest[0];
  const type = typeof options === 'string' ? options : (options as { type?: string } | undefined)?.type;
  if (type === 'RLockWarning' && typeof warning === 'string') {
    const { testPath, currentTestName } = expect.getState();
    const where = testPath ? `${relative(process.cwd(), testPath)} › ${currentTestName ?? '(outside a test)'}` : 'a spec';
    warning = `[expected: caused on purpose by ${where}] ${warning}`;
  }
  emitWarning(warning, ...rest);
};
