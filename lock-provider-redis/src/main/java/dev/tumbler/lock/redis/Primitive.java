package dev.tumbler.lock.redis;

import java.util.List;

/**
 * One lock-like thing on Redis: its keys, its release channel and its three scripts.
 *
 * @param what what it is, for messages ({@code lock}, {@code read lock}, ...)
 * @param name its name
 * @param keys its keys (fencing counter last), all in one hash slot
 * @param channel where its releases are published
 * @param acquire grants it
 * @param renew extends a grant
 * @param release gives a grant back (and, when fair, leaves the line)
 * @param fair whether waiters queue in a line and are handed the grant in order (the scripts of
 *     {@link Scripts}' fair section, whose keys have the line before the fencing counter)
 */
record Primitive(String what, String name, List<String> keys, String channel, Scripts.Script acquire,
    Scripts.Script renew, Scripts.Script release, boolean fair) {

  static Primitive mutex(RedisKeys keys, RedisKeys.Kind kind, String name, boolean fair) {
    String what = kind == RedisKeys.Kind.ELECTION ? "election" : "lock";
    if (fair) {
      return new Primitive(what, name, keys.withLine(keys.mutex(kind, name), kind, name), keys.channel(kind, name),
          Scripts.FAIR_MUTEX_ACQUIRE, Scripts.MUTEX_RENEW, Scripts.FAIR_MUTEX_RELEASE, true);
    }
    return new Primitive(what, name, keys.mutex(kind, name), keys.channel(kind, name), Scripts.MUTEX_ACQUIRE,
        Scripts.MUTEX_RENEW, Scripts.MUTEX_RELEASE, false);
  }

  static Primitive read(RedisKeys keys, String name, boolean fair) {
    RedisKeys.Kind kind = RedisKeys.Kind.READ_WRITE;
    if (fair) {
      return new Primitive("read lock", name, keys.withLine(keys.readWrite(name), kind, name), keys.channel(kind, name),
          Scripts.FAIR_READ_ACQUIRE, Scripts.READ_RENEW, Scripts.FAIR_READ_RELEASE, true);
    }
    return new Primitive("read lock", name, keys.readWrite(name), keys.channel(kind, name), Scripts.READ_ACQUIRE,
        Scripts.READ_RENEW, Scripts.READ_RELEASE, false);
  }

  static Primitive write(RedisKeys keys, String name, boolean fair) {
    RedisKeys.Kind kind = RedisKeys.Kind.READ_WRITE;
    if (fair) {
      return new Primitive("write lock", name, keys.withLine(keys.readWrite(name), kind, name),
          keys.channel(kind, name), Scripts.FAIR_WRITE_ACQUIRE, Scripts.MUTEX_RENEW, Scripts.FAIR_WRITE_RELEASE, true);
    }
    return new Primitive("write lock", name, keys.readWrite(name), keys.channel(kind, name), Scripts.WRITE_ACQUIRE,
        Scripts.MUTEX_RENEW, Scripts.MUTEX_RELEASE, false);
  }

  static Primitive semaphore(RedisKeys keys, String name, boolean fair) {
    RedisKeys.Kind kind = RedisKeys.Kind.SEMAPHORE;
    if (fair) {
      return new Primitive("semaphore", name, keys.withLine(keys.semaphore(name), kind, name), keys.channel(kind, name),
          Scripts.FAIR_SEMAPHORE_ACQUIRE, Scripts.SEMAPHORE_RENEW, Scripts.FAIR_SEMAPHORE_RELEASE, true);
    }
    return new Primitive("semaphore", name, keys.semaphore(name), keys.channel(kind, name), Scripts.SEMAPHORE_ACQUIRE,
        Scripts.SEMAPHORE_RENEW, Scripts.SEMAPHORE_RELEASE, false);
  }

  String describe() {
    return what + " '" + name + "'";
  }
}
