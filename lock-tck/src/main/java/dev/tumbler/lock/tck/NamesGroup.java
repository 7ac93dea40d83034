package dev.tumbler.lock.tck;

import static dev.tumbler.lock.tck.LockTck.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.spi.Checks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The TCK group "names" ({@link LockTck.Names}; needs: —). It checks: distinct names are distinct locks even when
 * they look alike to a backend (a/b a.b a:b a%2Fb, x* x? {x}, a/./b, /, ., A/a, NFC/NFD ä, emoji, the
 * 256-character longest name, in ASCII and CJK); bad names (null, blank, control characters, unpaired surrogates,
 * 257 characters) fail naming name on every factory.
 */
abstract class NamesGroup extends TckGroup {

  NamesGroup(LockTck tck) {
    super(tck);
  }

  private List<String> lookAlikes() {
    String p = name("n") + "-";
    List<String> l = new ArrayList<>();
    for (String s : List.of("a/b", "a.b", "a:b", "a_b", "a-b", "a%2Fb", "a\\b", "a b", "a|b", "a#b", "x", "x*", "x?",
        "{x}", "x}", "{x", "[x]", "a/../b", "b", "../b", "/", "//", "a/", "a//b", ".", "..", "A", "a", "a ",
        "\u00e4", "a\u0308", "\u65e5\u672c", "\uD83D\uDD12", "'x'", "\"x\"", "x;y", "x=y", "x&y")) {
      l.add(p + s);
    }
    l.add("/" + p);
    l.add(" " + p);
    String longest = p + "x".repeat(Checks.MAX_NAME_LENGTH - p.length());
    l.add(longest);
    l.add(longest.substring(0, longest.length() - 1) + "y");
    l.add(p + "\u9320".repeat(Checks.MAX_NAME_LENGTH - p.length()));
    return l;
  }

  @Test
  @DisplayName("distinct names are distinct locks, however alike they look to a backend")
  void distinctNames() throws InterruptedException {
    LockService a = open();
    LockService b = open();
    List<String> names = lookAlikes();
    List<Lease> leases = new ArrayList<>();
    for (String n : names) {
      // a free name: granted within GRANT_WAIT, as everywhere in the TCK (it was 1 s, and a PostgreSQL target with
      // timeout=1s once threw ServiceUnavailableException when one statement took longer on a busy machine: the
      // deadline had passed, so the provider could not try again)
      Lease l = held(a.lock(n).tryAcquire(GRANT_WAIT),
          "'" + n + "' was refused while other names were held: it collides with one of them");
      assertEquals(n, l.name(), "the lease's name differs from the lock's");
      assertEquals(n, a.lock(n).name());
      leases.add(l);
    }
    for (int i = 0; i < names.size(); i++) {
      String n = names.get(i);
      notGrantedWhileHeld(b.lock(n), a.lock(n), leases, i, "'" + n + "' held by one service was granted to another");
    }
    List<Lease> bs = new ArrayList<>();
    for (int i = 0; i < names.size(); i += 2) {
      leases.get(i).release();
    }
    for (int i = 0; i < names.size(); i++) {
      if (i % 2 == 0) {
        Optional<Lease> o = b.lock(names.get(i)).tryAcquire(releaseBound());
        bs.add(held(o, "'" + names.get(i) + "' was released but not granted: it collides with a held name"));
      } else {
        notGrantedWhileHeld(b.lock(names.get(i)), a.lock(names.get(i)), leases, i, "'" + names.get(i)
            + "' is held but was granted: releasing a look-alike freed it");
      }
    }
    bs.forEach(Lease::release);
    for (int i = 1; i < names.size(); i += 2) {
      leases.get(i).release();
    }
  }

  @Test
  @Requires(url = true)
  @DisplayName("(namespace, name) is injective: a namespace holding '/' or ':' never meets another's names")
  void namespacesInjective() throws InterruptedException {
    String ns = name("ns");
    // pairs a plain join on '/' or ':', or a percent-decoding of the namespace, would map to one lock
    List<List<String>> pairs = List.of(List.of("", ns + "/b/c"), List.of(ns, "b/c"), List.of(ns + "/b", "c"),
        List.of(ns + "/", "b/c"), List.of(ns, "/b/c"), List.of(ns + ":b", "c"), List.of(ns, "b:c"),
        List.of(ns + "%2Fb", "c"), List.of(ns + "-other", "b/c"), List.of("", ns + "-other/b/c"));
    List<Lease> leases = new ArrayList<>();
    List<Lock> holders = new ArrayList<>();
    for (List<String> p : pairs) {
      LockService s = connect(namespace(p.get(0)));
      holders.add(s.lock(p.get(1)));
      leases.add(held(holders.get(holders.size() - 1).tryAcquire(SLACK), "namespace '" + p.get(0) + "' with name '"
          + p.get(1) + "' was refused while the other pairs were held: it is the same lock as one of them"));
    }
    // and a namespace is applied the same way every time: the same pair is the same lock (a lease that ran out meanwhile,
    // its renewal late on a loaded machine, may be granted again: a JDBC target's was in a soak run)
    for (int i = 0; i < pairs.size(); i++) {
      List<String> p = pairs.get(i);
      LockService s = connect(namespace(p.get(0)));
      notGrantedWhileHeld(s.lock(p.get(1)), holders.get(i), leases, i, "namespace '" + p.get(0) + "' with name '"
          + p.get(1) + "' was granted to a second service while held");
    }
    leases.forEach(Lease::release);
  }

  private Properties namespace(String ns) {
    Properties p = new Properties();
    p.setProperty("namespace", ns);
    return p;
  }

  @Test
  @DisplayName("bad names fail with an error that names the argument")
  void badNames() {
    LockService s = open();
    List<String> bad = new ArrayList<>(List.of("", " ", "\t", "a\nb", "a\u0000b", "\u007f", "x\uD800",
        "\uDC00x", "y".repeat(Checks.MAX_NAME_LENGTH + 1)));
    assertRejects(NullPointerException.class, "name", "lock(null)", () -> s.lock(null));
    for (String n : bad) {
      String shown = "'" + n.replaceAll("\\p{Cntrl}", "?") + "'";
      assertRejects(IllegalArgumentException.class, "name", "lock(" + shown + ")", () -> s.lock(n));
      if (declares(Capability.SEMAPHORE)) {
        assertRejects(IllegalArgumentException.class, "name", "semaphore(" + shown + ")", () -> s.semaphore(n, 1));
      }
      if (declares(Capability.READ_WRITE)) {
        assertRejects(IllegalArgumentException.class, "name", "readWriteLock(" + shown + ")", () -> s.readWriteLock(n));
      }
      if (declares(Capability.LEADER_ELECTION)) {
        assertRejects(IllegalArgumentException.class, "name", "election(" + shown + ")", () -> s.election(n));
      }
    }
  }
}
