-- Redis' side of the client's request window (lib/scripts/request-window.ts).
-- A changing call's request argument is '<call id>/<gap>'. The call id is '<seq>', or
-- '<client id>:<seq>' where the log or record it goes to is not its own client's (an adopted
-- hold's, a per-client record keyed by it); <seq> (base 36) numbers the client's calls on this key
-- and never repeats. <gap> (base 36) is how far below <seq> the client's oldest call on this key
-- still in use was when this one was made: every call of that client on this key numbered lower
-- is answered and will never be sent again, so its entries may go. A log or record keeps fewer
-- than 2 × 64 entries of each client (64: the most calls of a client on a key in use at once).
-- An argument without '/' is a call id alone, and prunes nothing.

-- call_id(request): the id the call is logged under (no '=', ';' or '/').
local function call_id(request)
  return string.match(request, '^[^/]*')
end

-- forget_answered(log, request): `log` ('<call id>=<answer>;' entries) without the entries of the
-- request's client (same tag) numbered below its oldest call in use.
local function forget_answered(log, request)
  local tag, seq, gap = string.match(request, '^(.-)(%w+)/(%w+)$')
  if not gap then return log end
  local oldest = tonumber(seq, 36) - tonumber(gap, 36)
  return (string.gsub(log, '([^;=]-)(%w+)=[^;]*;', function(entry_tag, entry_seq)
    if entry_tag == tag and tonumber(entry_seq, 36) < oldest then return '' end
  end))
end
