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
 * @param release gives a grant back
 */
record Primitive(String what, String name, List<String> keys, String channel, Scripts.Script acquire,
    Scripts.Script renew, Scripts.Script release) {

  static Primitive mutex(RedisKeys keys, RedisKeys.Kind kind, String name) {
    return new Primitive(kind == RedisKeys.Kind.ELECTION ? "election" : "lock", name, keys.mutex(kind, name),
        keys.channel(kind, name), Scripts.MUTEX_ACQUIRE, Scripts.MUTEX_RENEW, Scripts.MUTEX_RELEASE);
  }

  static Primitive read(RedisKeys keys, String name) {
    return new Primitive("read lock", name, keys.readWrite(name), keys.channel(RedisKeys.Kind.READ_WRITE, name),
        Scripts.READ_ACQUIRE, Scripts.READ_RENEW, Scripts.READ_RELEASE);
  }

  static Primitive write(RedisKeys keys, String name) {
    return new Primitive("write lock", name, keys.readWrite(name), keys.channel(RedisKeys.Kind.READ_WRITE, name),
        Scripts.WRITE_ACQUIRE, Scripts.MUTEX_RENEW, Scripts.MUTEX_RELEASE);
  }

  static Primitive semaphore(RedisKeys keys, String name) {
    return new Primitive("semaphore", name, keys.semaphore(name), keys.channel(RedisKeys.Kind.SEMAPHORE, name),
        Scripts.SEMAPHORE_ACQUIRE, Scripts.SEMAPHORE_RENEW, Scripts.SEMAPHORE_RELEASE);
  }

  String describe() {
    return what + " '" + name + "'";
  }
}
