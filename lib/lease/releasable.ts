/**
 * What Lease and Permit share: a release that runs once, can be tried again after it rejected
 * (the retry is the same request, so Redis applies it once), and `await using` support.
 */
export abstract class Releasable implements AsyncDisposable {
  readonly #release: () => Promise<void>;
  #released: Promise<void> | undefined;

  protected constructor(release: () => Promise<void>) {
    this.#release = release;
  }

  /** True once `release()` was called (and did not reject). */
  get released(): boolean {
    return this.#released !== undefined;
  }

  /**
   * Releases; later calls return the first call's promise, unless it rejected: then the release
   * is tried again.
   */
  release(): Promise<void> {
    this.#released ??= this.#release().catch((error: unknown) => {
      this.#released = undefined;
      throw error;
    });
    return this.#released;
  }

  /** `await using x = await lock.acquire()`: releases when the scope ends. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}
