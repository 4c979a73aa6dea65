const N = 200_000, TASKS = 100;
const TIMED_OUT = Symbol('t');
// v3: wrapper only (no registration)
function wrapOnly<T>(promise: Promise<T>, _deadline: number): Promise<T | typeof TIMED_OUT> {
  return new Promise((resolve, reject) => { promise.then(resolve, reject); });
}
// v2: array with lazy deletion
class R { done = false; constructor(readonly at: number, readonly resolve: (v: any) => void, readonly reject: (e: unknown) => void) {} settle(v: unknown) { this.done = true; this.resolve(v); } fail(e: unknown) { this.done = true; this.reject(e); } }
let list: R[] = []; let live = 0;
function arrRace<T>(promise: Promise<T>, deadline: number): Promise<T | typeof TIMED_OUT> {
  return new Promise((resolve, reject) => {
    const r = new R(deadline, resolve, reject);
    list.push(r); live++;
    if (list.length > 2 * live + 64) { list = list.filter((x) => !x.done); }
    promise.then((v) => { live--; r.settle(v); }, (e) => { live--; r.fail(e); });
  });
}
// v4: set (as now, simplified)
const set = new Set<R>();
function setRace<T>(promise: Promise<T>, deadline: number): Promise<T | typeof TIMED_OUT> {
  return new Promise((resolve, reject) => {
    const r = new R(deadline, resolve, reject);
    set.add(r);
    promise.then((v) => { set.delete(r); r.settle(v); }, (e) => { set.delete(r); r.fail(e); });
  });
}
async function run(f: ((p: Promise<number>, d: number) => Promise<unknown>) | undefined): Promise<number> {
  const t = process.cpuUsage();
  await Promise.all(Array.from({ length: TASKS }, async () => {
    for (let i = 0; i < N / TASKS; i++) {
      const p = new Promise<number>((r) => setImmediate(r, i));
      if (f) await f(p, performance.now() + 10_000); else await p.then((v) => v);
    }
  }));
  const u = process.cpuUsage(t); return (u.user + u.system) / N;
}
for (let r = 0; r < 3; r++) {
  const a = await run(undefined), w = await run(wrapOnly), s = await run(setRace), l = await run(arrRace);
  console.log(`plain ${a.toFixed(3)}; wrap only +${(w - a).toFixed(3)}; set +${(s - a).toFixed(3)}; array +${(l - a).toFixed(3)} µs`);
}
