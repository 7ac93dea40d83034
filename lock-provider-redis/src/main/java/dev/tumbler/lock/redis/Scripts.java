package dev.tumbler.lock.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The Lua scripts: every multi-step operation on a lock is one script, so it is atomic on the server and
 * costs one round trip. Conventions shared by all of them:
 *
 * <ul>
 *   <li>{@code KEYS} are the keys of one primitive ({@link RedisKeys}), all in one hash slot; the fencing
 *       counter is always the last key.
 *   <li>Acquire: {@code ARGV = owner, ttlMs, [permits, maxPermits]}; returns {@code {1, token}} when
 *       granted, {@code {0, waitMs}} otherwise, where {@code waitMs} is when the obstacle expires by
 *       itself (-1: unknown); a fair script's refusal adds the last token drawn, {@code {0, waitMs, fence}}.
 *   <li>Renew: {@code ARGV = owner, ttlMs}; returns 1 if the grant is still this owner's and was
 *       extended (and the fencing counter with it, see below), 0 otherwise (then the lease is lost).
 *   <li>Release: {@code ARGV = owner, channel}; deletes only what this owner holds and publishes the
 *       owner on the channel in the same script, so waiters are woken one hop after the release (the
 *       owner lets a waiter on several Redlock masters count one release once). An empty channel
 *       publishes nothing: a Redlock grant on a minority, undone while another holds the lock.
 *   <li>Times come from the server ({@code TIME}), never from the client: expiries of permits and readers
 *       are compared against the same clock that sets them.
 * </ul>
 *
 * <h2>Fencing tokens</h2>
 * Each primitive has a counter key, incremented by every grant. A plain counter would restart at 1 when
 * its key is lost — a server restart without persistence, or the counter's expiry — and repeat old tokens;
 * so a counter is <em>seeded</em> from the server's clock in microseconds ({@code TIME}, about 2^50.7
 * today). Every earlier token was at most its own seed plus the number of grants since, and grants of one
 * name come far slower than one per microsecond, so a new seed is larger than every earlier token.
 *
 * <p>What makes this hold when a client stops at any point: a counter below {@link #SEEDED}
 * (2^50 µs, September 2005) is <em>unseeded</em>, whatever left it so — a first grant, a lost key, or an
 * {@code INCR} outside a script (the pipelined first attempt, {@link Backend.Single#acquireFirst}) whose
 * client died before it could seed. An unseeded value is never reported as a token: {@link #FENCE} seeds
 * it in the same script that increments it, and the pipelined path re-seeds it with {@link #SEED_FENCE}
 * before it reports a grant. Either way the token is at least the server's clock, and larger than the
 * counter held. So no interleaving of clients and no interrupted call can make a token count from a small
 * value, and the counter needs no state beyond its own value.
 *
 * <p>Every grant and every renewal also refreshes the counter's expiry (one day): a name in use, even by
 * one lease renewed for days, keeps its counter; an abandoned name's counter is gone a day after its last
 * grant or renewal, so names do not leak memory (a later grant seeds it again from the clock). Limits,
 * written down in the README: the server's clock must not step backwards across a lost counter (by more
 * than the time since the last grant), and must read later than 2005 (else every grant re-seeds: still
 * increasing while the counter lives, but a lost counter can repeat tokens); a counter must never come
 * back smaller than it was — a restart from persistence that lost the last writes, or a failover to a
 * replica that missed them, can repeat tokens unless the server's clock has moved past them (cluster and
 * sentinel modes floor every token at the clock, {@link #clockFloored}, for that reason).
 */
final class Scripts {

  /** A script and its SHA-1, for EVALSHA. */
  record Script(String name, String source, String sha) {
    static Script of(String name, String source) {
      return new Script(name, source, sha1(source));
    }

    @Override
    public String toString() {
      return name;
    }
  }

  private Scripts() {}

  /**
   * Counters below this (2^50 µs since 1970, September 2005) are unseeded: no server clock reads that
   * little, so a counter seeded from one is always above it.
   */
  static final long SEEDED = 1L << 50;

  /** How long a counter outlives the last grant of its name, in ms (one day). */
  static final String FENCE_TTL_MS = "86400000";

  // INCR and PEXPIRE on the hot path; TIME only when the counter is unseeded (first grant, lost key, or left
  // by an INCR outside a script): then the token is at least the clock and more than the counter held
  private static final String FENCE = """
      local function fence(k)
        local tok = redis.call('INCR', k)
        if tok < 1125899906842624 then
          local t = redis.call('TIME')
          local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
          if tok < now then tok = now end
          redis.call('SET', k, string.format('%d', tok), 'PX', 86400000)
        else
          redis.call('PEXPIRE', k, 86400000)
        end
        return tok
      end
      """;

  private static final String NOW_MS = """
      local function nowms()
        local t = redis.call('TIME')
        return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      end
      -- keeps a sorted set of expiries alive until its last member expires
      local function keepUntilLast(z, ...)
        local last = redis.call('ZRANGE', z, -1, -1, 'WITHSCORES')
        if last[2] then
          local at = string.format('%d', tonumber(last[2]))
          redis.call('PEXPIREAT', z, at)
          for _, k in ipairs({...}) do redis.call('PEXPIREAT', k, at) end
        end
      end
      """;

  // ---- mutex: KEYS = holder, fence

  static final Script MUTEX_ACQUIRE = Script.of("mutex-acquire", FENCE + """
      if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
        return {1, fence(KEYS[2])}
      end
      return {0, redis.call('PTTL', KEYS[1]), redis.call('GET', KEYS[1])}
      """);

  static final Script MUTEX_RENEW = Script.of("mutex-renew", """
      if redis.call('GET', KEYS[1]) == ARGV[1] then
        redis.call('PEXPIRE', KEYS[1], ARGV[2])
        redis.call('PEXPIRE', KEYS[#KEYS], 86400000)
        return 1
      end
      return 0
      """);

  static final Script MUTEX_RELEASE = Script.of("mutex-release", """
      if redis.call('GET', KEYS[1]) == ARGV[1] then
        redis.call('DEL', KEYS[1])
        if ARGV[2] ~= '' then redis.call('PUBLISH', ARGV[2], ARGV[1]) end
        return 1
      end
      return 0
      """);

  // ---- read/write: KEYS = writer, readers (zset owner -> expiry ms), fence

  static final Script READ_ACQUIRE = Script.of("read-acquire", FENCE + NOW_MS + """
      local pttl = redis.call('PTTL', KEYS[1])
      if pttl ~= -2 then return {0, pttl, redis.call('GET', KEYS[1])} end
      local now = nowms()
      redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
      redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
      keepUntilLast(KEYS[2])
      return {1, fence(KEYS[3])}
      """);

  static final Script WRITE_ACQUIRE = Script.of("write-acquire", FENCE + NOW_MS + """
      local pttl = redis.call('PTTL', KEYS[1])
      if pttl ~= -2 then return {0, pttl, redis.call('GET', KEYS[1])} end
      local now = nowms()
      redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
      local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
      if last[2] then return {0, tonumber(last[2]) - now, ' readers'} end
      redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
      return {1, fence(KEYS[3])}
      """);

  static final Script READ_RENEW = Script.of("read-renew", NOW_MS + """
      local now = nowms()
      local s = redis.call('ZSCORE', KEYS[2], ARGV[1])
      if not s or tonumber(s) <= now then return 0 end
      redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
      keepUntilLast(KEYS[2])
      redis.call('PEXPIRE', KEYS[#KEYS], 86400000)
      return 1
      """);

  // (readers whose term ended count as gone: one that crashed stays listed until an acquire cleans the set, and the
  // last live reader's release must still be published)
  static final Script READ_RELEASE = Script.of("read-release", NOW_MS + """
      local removed = redis.call('ZREM', KEYS[2], ARGV[1])
      if removed == 1 and ARGV[2] ~= '' and redis.call('ZCOUNT', KEYS[2], '(' .. nowms(), '+inf') == 0 then
        redis.call('PUBLISH', ARGV[2], ARGV[1])
      end
      return removed
      """);

  // the write side renews and releases exactly like a mutex: KEYS[1] is the holder in both layouts

  // ---- semaphore: KEYS = holders (zset owner -> expiry ms), permits (hash owner -> n), fence

  private static final String SEM_CLEAN = """
      local function clean(now)
        local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
        for i = 1, #gone do redis.call('HDEL', KEYS[2], gone[i]) end
        if #gone > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now) end
        local used = 0
        for _, v in ipairs(redis.call('HVALS', KEYS[2])) do used = used + tonumber(v) end
        return used
      end
      """;

  static final Script SEMAPHORE_ACQUIRE = Script.of("semaphore-acquire", FENCE + NOW_MS + SEM_CLEAN + """
      local now = nowms()
      local used = clean(now)
      local want = tonumber(ARGV[3])
      if used + want > tonumber(ARGV[4]) then
        local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
        if first[2] then return {0, tonumber(first[2]) - now} end
        return {0, -1}
      end
      redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
      redis.call('HSET', KEYS[2], ARGV[1], want)
      keepUntilLast(KEYS[1], KEYS[2])
      return {1, fence(KEYS[3])}
      """);

  static final Script SEMAPHORE_RENEW = Script.of("semaphore-renew", NOW_MS + """
      local now = nowms()
      local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
      if not s or tonumber(s) <= now then return 0 end
      redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
      keepUntilLast(KEYS[1], KEYS[2])
      redis.call('PEXPIRE', KEYS[#KEYS], 86400000)
      return 1
      """);

  static final Script SEMAPHORE_RELEASE = Script.of("semaphore-release", """
      local removed = redis.call('ZREM', KEYS[1], ARGV[1])
      redis.call('HDEL', KEYS[2], ARGV[1])
      if removed == 1 and ARGV[2] ~= '' then redis.call('PUBLISH', ARGV[2], ARGV[1]) end
      return removed
      """);

  /** {@code ARGV = maxPermits}; returns the permits not out (never below 0). */
  static final Script SEMAPHORE_AVAILABLE = Script.of("semaphore-available", NOW_MS + SEM_CLEAN + """
      local free = tonumber(ARGV[1]) - clean(nowms())
      if free < 0 then return 0 end
      return free
      """);

  // ---- fair (FIFO) variants, one server only. The line of a primitive is a sorted set Q (owner -> ticket, in
  // arrival order); each waiter in it has its own key Q:<owner>, in the same hash slot, that expires unless the
  // waiter asks again in time ('x<ttl>' exclusive, 'r<ttl>' shared, 's<ttl>:<permits>:<max>' permits). A waiter
  // whose key is gone (it died or gave up) is skipped. When the primitive becomes free for the line's first, the
  // script that freed it grants it there at once ("hands" it): the grant is written as the waiter asked for it,
  // its token is kept under the waiter's key for the grant's term, and "grant <owner> <token>" is published on
  // the channel, so the waiter's acquire returns when that message arrives; if it is lost, the waiter's next
  // look finds the token under its key. A message can also arrive after its grant expired unused (and went on to
  // someone else): a refusal carries the last token drawn, and a waiter takes a hand-off only if its token is larger
  // than that of its last refusal — drawn after that look, so the grant's term began after the look was sent.
  // The channel is the line's key without its ':q'. Acquire: ARGV = owner,
  // ttlMs, liveMs (0: do not join the line), [permits, maxPermits]. Release (also: leave the line): ARGV = owner.
  // The common case — nobody in line — is decided before the line's functions are even defined.

  private static final String LINE = """
      local function wkey(o) return Q .. ':' .. o end
      -- the first live waiter and its entry; drops dead ones on the way
      local function nextLive()
        while true do
          local first = redis.call('ZRANGE', Q, 0, 0)[1]
          if not first then return nil end
          local v = redis.call('GET', wkey(first))
          if v then return first, v end
          redis.call('ZREM', Q, first)
        end
      end
      local function hand(o, ttl)
        local tok = string.format('%d', fence(F))
        redis.call('SET', wkey(o), tok, 'PX', ttl)
        redis.call('ZREM', Q, o)
        redis.call('PUBLISH', string.sub(Q, 1, -3), 'grant ' .. o .. ' ' .. tok)
      end
      -- the token of a grant handed to o, if any (the entry of a waiter is not a number)
      local function handed(o)
        return tonumber(redis.call('GET', wkey(o)) or '')
      end
      -- a refusal: when the obstacle expires by itself, and the last token drawn, so that the waiter can tell a
      -- hand-off that came after this look from one whose message arrived late (its grant gone before this look)
      local function refused(w)
        return {0, w, tonumber(redis.call('GET', F) or '0') or 0}
      end
      local function join(o, entry, live)
        if not redis.call('ZSCORE', Q, o) then
          local last = redis.call('ZRANGE', Q, -1, -1, 'WITHSCORES')
          redis.call('ZADD', Q, last[2] and tonumber(last[2]) + 1 or 1, o)
        end
        redis.call('SET', wkey(o), entry, 'PX', live)
        if redis.call('PTTL', Q) < tonumber(live) then redis.call('PEXPIRE', Q, live) end
      end
      """;

  // exclusive holder W, optional readers R (sorted set owner -> expiry ms): a mutex, or a read/write lock
  private static final String RW_LINE = """
      local function readers(now)
        if not R then return 0 end
        redis.call('ZREMRANGEBYSCORE', R, '-inf', now)
        return redis.call('ZCARD', R)
      end
      local function addReader(o, ttl, now)
        redis.call('ZADD', R, now + tonumber(ttl), o)
        keepUntilLast(R)
      end
      -- grants the lock to the line's first while it is free for them: one writer, or every reader up to the next writer
      local function grantHeads(now)
        while redis.call('EXISTS', W) == 0 do
          local head, v = nextLive()
          if not head then return end
          local ttl = string.sub(v, 2)
          if string.sub(v, 1, 1) == 'x' then
            if readers(now) > 0 then return end
            redis.call('SET', W, head, 'PX', ttl)
            hand(head, ttl)
            return
          end
          addReader(head, ttl, now)
          hand(head, ttl)
        end
      end
      """;

  // The attempts of one fair wait share its owner (its place in line) and are numbered: ARGV's second to last is the
  // attempt's number, increasing within the wait. Once an attempt's answer was lost, a copy of it may reach the server
  // late: after a later attempt (its caller asked again) or after the wait is over. Such a copy must change nothing:
  // else it could give back, as "a grant whose answer was lost", the grant a later attempt holds, take the lock for
  // nobody, or take a place in line that nobody keeps. So the attempts that come after a lost answer are recorded
  // (ARGV's last is '1'), and the wait's end is recorded too when it got no lock (ATTEMPT_OVER); an attempt whose
  // number is not above the record is refused untouched. A record lives a term; without a lost answer there is none.
  private static final String ATTEMPT = """
      do
        local k, n = Q .. ':' .. ARGV[1] .. ':n', tonumber(ARGV[#ARGV - 1])
        if n <= (tonumber(redis.call('GET', k) or '0') or 0) then
          return {0, -1, tonumber(redis.call('GET', F) or '0') or 0}
        end
        if ARGV[#ARGV] == '1' then redis.call('SET', k, ARGV[#ARGV - 1], 'PX', ARGV[2]) end
      end
      """;

  // a fair release with ARGV = owner, ttl: the owner's wait, which had a lost answer, is over with no lock; no copy of
  // its attempts may act any more
  private static final String ATTEMPT_OVER = """
      if ARGV[2] then redis.call('SET', Q .. ':' .. ARGV[1] .. ':n', '9007199254740991', 'PX', ARGV[2]) end
      """;

  private static final String MUTEX_LAYOUT = """
      local W, R, Q, F = KEYS[1], false, KEYS[2], KEYS[3]
      """;
  private static final String RW_LAYOUT = """
      local W, R, Q, F = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
      """;

  // nobody in line and nobody holding: granted at once
  private static final String WRITE_FAST = """
      if redis.call('EXISTS', Q) == 0 and (not R or redis.call('EXISTS', R) == 0)
          and redis.call('SET', W, ARGV[1], 'NX', 'PX', ARGV[2]) then
        return {1, fence(F)}
      end
      """;

  // the holder's release with nobody in line. A holder that was handed the lock has its own key under the line
  // (the token it was handed), which outlives the line's last entry: it goes with the release, whoever waits
  private static final String WRITE_RELEASE_FAST = """
      local mine = false
      if redis.call('GET', W) == ARGV[1] then
        redis.call('DEL', W, Q .. ':' .. ARGV[1])
        if redis.call('EXISTS', Q) == 0 then return 1 end
        mine = true
      end
      """;

  private static final String WRITE_ACQUIRE_BODY = """
      local o, ttl = ARGV[1], ARGV[2]
      local now = nowms()
      -- a grant of this owner whose answer was lost: give it back and decide again
      if not handed(o) and redis.call('GET', W) == o then redis.call('DEL', W) end
      grantHeads(now)
      local t = handed(o)
      if t then
        if redis.call('GET', W) == o then
          redis.call('PEXPIRE', W, ttl)
          redis.call('PEXPIRE', wkey(o), ttl)
          return {1, t}
        end
        redis.call('DEL', wkey(o))
      end
      if redis.call('EXISTS', W) == 0 and readers(now) == 0 and not nextLive() then
        redis.call('SET', W, o, 'PX', ttl)
        return {1, fence(F)}
      end
      if ARGV[3] ~= '0' then join(o, 'x' .. ttl, ARGV[3]) end
      local pttl = redis.call('PTTL', W)
      if pttl >= 0 then return refused(pttl) end
      if R then
        local last = redis.call('ZRANGE', R, -1, -1, 'WITHSCORES')
        if last[2] then return refused(tonumber(last[2]) - now) end
      end
      return refused(-1)
      """;

  private static final String WRITE_RELEASE_BODY = """
      local o = ARGV[1]
      redis.call('ZREM', Q, o)
      redis.call('DEL', wkey(o))
      grantHeads(nowms())
      if mine then return 1 end
      return 0
      """;

  /** Fair mutex: {@code KEYS = holder, line, fence}. */
  static final Script FAIR_MUTEX_ACQUIRE = Script.of("fair-mutex-acquire",
      MUTEX_LAYOUT + FENCE + ATTEMPT + WRITE_FAST + NOW_MS + LINE + RW_LINE + WRITE_ACQUIRE_BODY);

  static final Script FAIR_MUTEX_RELEASE = Script.of("fair-mutex-release",
      MUTEX_LAYOUT + ATTEMPT_OVER + WRITE_RELEASE_FAST + FENCE + NOW_MS + LINE + RW_LINE + WRITE_RELEASE_BODY);

  /** Fair read/write lock: {@code KEYS = writer, readers, line, fence}; renewals as in the unfair layout. */
  static final Script FAIR_WRITE_ACQUIRE = Script.of("fair-write-acquire",
      RW_LAYOUT + FENCE + ATTEMPT + WRITE_FAST + NOW_MS + LINE + RW_LINE + WRITE_ACQUIRE_BODY);

  static final Script FAIR_WRITE_RELEASE = Script.of("fair-write-release",
      RW_LAYOUT + ATTEMPT_OVER + WRITE_RELEASE_FAST + FENCE + NOW_MS + LINE + RW_LINE + WRITE_RELEASE_BODY);

  static final Script FAIR_READ_ACQUIRE = Script.of("fair-read-acquire", RW_LAYOUT + FENCE + ATTEMPT + NOW_MS + LINE + RW_LINE
      + """
      local o, ttl = ARGV[1], ARGV[2]
      local now = nowms()
      -- a grant of this owner whose answer was lost: give it back and decide again
      if not handed(o) then redis.call('ZREM', R, o) end
      grantHeads(now)
      local t = handed(o)
      if t then
        local s = redis.call('ZSCORE', R, o)
        if s and tonumber(s) > now then
          addReader(o, ttl, now)
          redis.call('PEXPIRE', wkey(o), ttl)
          return {1, t}
        end
        redis.call('DEL', wkey(o))
      end
      if redis.call('EXISTS', W) == 0 and not nextLive() then
        addReader(o, ttl, now)
        return {1, fence(F)}
      end
      if ARGV[3] ~= '0' then join(o, 'r' .. ttl, ARGV[3]) end
      local pttl = redis.call('PTTL', W)
      if pttl >= 0 then return refused(pttl) end
      return refused(-1)
      """);

  static final Script FAIR_READ_RELEASE = Script.of("fair-read-release", RW_LAYOUT + ATTEMPT_OVER + FENCE + NOW_MS + LINE
      + RW_LINE + """
      local o = ARGV[1]
      local removed = redis.call('ZREM', R, o)
      redis.call('DEL', wkey(o))
      if redis.call('EXISTS', Q) == 0 then return removed end
      redis.call('ZREM', Q, o)
      grantHeads(nowms())
      return removed
      """);

  private static final String SEM_LAYOUT = """
      local H, P, Q, F = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
      """;

  private static final String SEM_LINE = """
      -- grants permits to the line's first while they fit, strictly in order
      local function grantHeads(now)
        local used = clean(now)
        while true do
          local head, v = nextLive()
          if not head then return end
          local ttl, n, max = string.match(v, '^s(%d+):(%d+):(%d+)$')
          n = tonumber(n)
          if used + n > tonumber(max) then return end
          redis.call('ZADD', H, now + tonumber(ttl), head)
          redis.call('HSET', P, head, n)
          keepUntilLast(H, P)
          hand(head, ttl)
          used = used + n
        end
      end
      """;

  /** Fair semaphore: {@code KEYS = holders, permits, line, fence}, {@code ARGV[4..5] = permits, maxPermits}. */
  static final Script FAIR_SEMAPHORE_ACQUIRE = Script.of("fair-semaphore-acquire",
      SEM_LAYOUT + FENCE + ATTEMPT + NOW_MS + SEM_CLEAN + LINE + SEM_LINE + """
      local o, ttl = ARGV[1], ARGV[2]
      local want, max = tonumber(ARGV[4]), tonumber(ARGV[5])
      local now = nowms()
      -- a grant of this owner whose answer was lost: give it back and decide again
      if not handed(o) and redis.call('ZREM', H, o) == 1 then redis.call('HDEL', P, o) end
      grantHeads(now)
      local t = handed(o)
      if t then
        local s = redis.call('ZSCORE', H, o)
        if s and tonumber(s) > now then
          redis.call('ZADD', H, now + tonumber(ttl), o)
          keepUntilLast(H, P)
          redis.call('PEXPIRE', wkey(o), ttl)
          return {1, t}
        end
        redis.call('DEL', wkey(o))
      end
      local used = clean(now)
      if used + want <= max and not nextLive() then
        redis.call('ZADD', H, now + tonumber(ttl), o)
        redis.call('HSET', P, o, want)
        keepUntilLast(H, P)
        return {1, fence(F)}
      end
      if ARGV[3] ~= '0' then join(o, 's' .. ttl .. ':' .. want .. ':' .. ARGV[5], ARGV[3]) end
      local first = redis.call('ZRANGE', H, 0, 0, 'WITHSCORES')
      if first[2] then return refused(tonumber(first[2]) - now) end
      return refused(-1)
      """);

  static final Script FAIR_SEMAPHORE_RELEASE = Script.of("fair-semaphore-release",
      SEM_LAYOUT + ATTEMPT_OVER + FENCE + NOW_MS + SEM_CLEAN + LINE + SEM_LINE + """
      local o = ARGV[1]
      local removed = redis.call('ZREM', H, o)
      redis.call('HDEL', P, o)
      redis.call('DEL', wkey(o))
      if redis.call('EXISTS', Q) == 0 then return removed end
      redis.call('ZREM', Q, o)
      grantHeads(nowms())
      return removed
      """);

  /**
   * {@code KEYS = fence}: draws a token from a counter that an {@code INCR} outside a script found unseeded
   * (below {@link #SEEDED}): the token is one more than the counter holds now, and at least the server's
   * clock in microseconds; the counter becomes it, for a day. Atomic, like {@link #FENCE}; and since it
   * always draws a value larger than the counter, two clients that both found the counter unseeded never
   * get the same token. Returns the token.
   */
  static final Script SEED_FENCE = Script.of("seed-fence", """
      local tok = (tonumber(redis.call('GET', KEYS[1]) or '0') or 0) + 1
      local t = redis.call('TIME')
      local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
      if tok < now then tok = now end
      redis.call('SET', KEYS[1], string.format('%d', tok), 'PX', 86400000)
      return tok
      """);

  // ---- Redlock: raises a node's fencing counter to the token granted over the majority

  /**
   * {@code KEYS = fence}, {@code ARGV = token}: the counter becomes at least {@code token}, and lives a day
   * from now either way.
   */
  static final Script RAISE_FENCE = Script.of("raise-fence", """
      local c = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
      if c < tonumber(ARGV[1]) then
        redis.call('SET', KEYS[1], ARGV[1], 'PX', 86400000)
      else
        redis.call('PEXPIRE', KEYS[1], 86400000)
      end
      return 1
      """);

  /** {@code KEYS = holder}: the holder's owner value, or false. For elections' leader lookup. */
  static final Script HOLDER = Script.of("holder", """
      return redis.call('GET', KEYS[1])
      """);

  // ---- replicated modes (cluster, sentinel): tokens floored at the server's clock

  /**
   * {@link #FENCE} for a server that can fail over to an asynchronous replica: every token is at least
   * the server's clock in microseconds ({@code TIME}), and one more than the counter. A promoted replica
   * may have missed the last counter writes, but its clock has moved on since the last token the old
   * primary granted (which was at most that primary's clock then, plus the grants within one microsecond),
   * so its first token is larger — as long as the two servers' clocks differ by less than the time the
   * failover took (seconds, against the milliseconds NTP keeps). Costs one {@code TIME} and one
   * {@code SET} per grant; tokens stay below 2^53 (about 2^50.6 now).
   */
  private static final String FENCE_CLOCK_FLOORED = """
      local function fence(k)
        local tok = redis.call('INCR', k)
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
        if tok < now then tok = now end
        redis.call('SET', k, string.format('%d', tok), 'PX', 86400000)
        return tok
      end
      """;

  /** Whether {@code script} draws fencing tokens (through {@link #FENCE}). */
  static boolean drawsTokens(Script script) {
    return script.source().contains(FENCE);
  }

  /**
   * {@code acquire} with its fencing counter floored at the server's clock ({@link #FENCE_CLOCK_FLOORED}),
   * for {@code mode=cluster} and {@code mode=sentinel}. Same keys, arguments and reply.
   *
   * @throws IllegalArgumentException if {@code acquire} does not draw its token through {@link #FENCE}
   */
  static Script clockFloored(Script acquire) {
    if (!acquire.source().contains(FENCE)) {
      throw new IllegalArgumentException("script " + acquire.name() + " draws no fencing token through fence()");
    }
    return Script.of(acquire.name() + "-clock-floored", acquire.source().replace(FENCE, FENCE_CLOCK_FLOORED));
  }

  private static String sha1(String s) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is missing from this JVM", e);
    }
  }
}
