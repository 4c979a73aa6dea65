/**
 * Waits for `call` to settle (either way) for at most `ms`; true if it did. The timer is unref'd:
 * a bounded wait on the way out never keeps the process alive by itself.
 */
export async function settleWithin(call: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref?.();
  });
  const settled = call.then(
    () => true,
    () => true,
  );
  try {
    return await Promise.race([settled, bound]);
  } finally {
    clearTimeout(timer);
  }
}
