package dev.tumbler.lock.jdbc;

/**
 * One lock-like thing in the lock table: its key (namespace, kind and name, encoded so that no two
 * different triples meet), and the mode its grants take.
 *
 * @param what what it is, for messages ({@code lock}, {@code read lock}, ...)
 * @param name its name
 * @param key its {@code lock_key}
 * @param mode {@code X} exclusive, {@code S} shared (read), {@code P} permits
 */
record Primitive(String what, String name, String key, char mode) {

  /** The kinds of lock name, each its own key space. */
  enum Kind {
    MUTEX('M'), READ_WRITE('W'), SEMAPHORE('S'), ELECTION('E');

    final char code;

    Kind(char code) {
      this.code = code;
    }
  }

  /** {@code <kind>/<namespace length>/<namespace>/<name>}: the length makes the split unambiguous. */
  static String key(String namespace, Kind kind, String name) {
    return kind.code + "/" + namespace.length() + "/" + namespace + "/" + name;
  }

  /**
   * The kind code and the name of {@code key} when it is in {@code namespace}; empty for another
   * namespace or a key this provider did not write.
   */
  static java.util.Optional<String[]> parse(String key, String namespace) {
    String prefix = "/" + namespace.length() + "/" + namespace + "/";
    if (key.length() <= 1 + prefix.length() || !key.startsWith(prefix, 1)) {
      return java.util.Optional.empty();
    }
    return java.util.Optional.of(new String[] {key.substring(0, 1), key.substring(1 + prefix.length())});
  }

  static Primitive mutex(String namespace, String name) {
    return new Primitive("lock", name, key(namespace, Kind.MUTEX, name), 'X');
  }

  static Primitive election(String namespace, String name) {
    return new Primitive("election", name, key(namespace, Kind.ELECTION, name), 'X');
  }

  static Primitive read(String namespace, String name) {
    return new Primitive("read lock", name, key(namespace, Kind.READ_WRITE, name), 'S');
  }

  static Primitive write(String namespace, String name) {
    return new Primitive("write lock", name, key(namespace, Kind.READ_WRITE, name), 'X');
  }

  static Primitive semaphore(String namespace, String name) {
    return new Primitive("semaphore", name, key(namespace, Kind.SEMAPHORE, name), 'P');
  }

  boolean isElection() {
    return key.charAt(0) == Kind.ELECTION.code;
  }

  String describe() {
    return what + " '" + name + "'";
  }
}
