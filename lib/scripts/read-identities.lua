-- Reads the process identities of clients (lib/inspect/process-identity.ts writes them), for
-- `LockClient.inspect()` and the `rlock` command. Read-only.
-- KEYS[1..n] identity keys ({<prefix>:}:client:<client id>), all in one hash slot
-- Returns { JSON identity or false, ... } in the order of KEYS (false: expired, or never written).
return redis.call('MGET', unpack(KEYS))
