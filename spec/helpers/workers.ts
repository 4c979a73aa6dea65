/**
 * How many spec files run at once (RLOCK_TEST_WORKERS, default 3: specs mostly wait, so two cores
 * take three; the suite took 479 s with 2 and 378 s with 3 on CI's two cores). A server given by REDIS_URL
 * is shared, so then files run one at a time: command counts and settings need it to themselves.
 */
export const TEST_WORKERS = process.env.REDIS_URL ? 1 : Math.max(1, Number(process.env.RLOCK_TEST_WORKERS ?? 3) || 1);
