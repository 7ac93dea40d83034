package dev.tumbler.torture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The fenced register over its socket: the order it stamps, the writes it accepts and rejects, what it refuses. */
class RegisterTest {

  @Test
  void writesBelowTheHighestAcceptedTokenOfTheirNameAreStaleAndEverythingIsStampedInOrder() {
    History history = new History();
    try (Register register = new Register(history, System.nanoTime())) {
      Worker.Reporter c1 = new Worker.Reporter(register.address(), "c1");
      Worker.Reporter c2 = new Worker.Reporter(register.address(), "c2");
      c1.hello("provider=test;capabilities=MUTEX");
      c2.hello("provider=test;capabilities=MUTEX");
      assertEquals(true, write(c1, "n0", 5).get("ok"));
      assertEquals(true, write(c1, "n0", 5).get("ok"), "one holder writes several times with its one token");
      assertEquals(true, write(c2, "n0", 7).get("ok"));
      Map<String, Object> stale = write(c1, "n0", 5);
      assertEquals(false, stale.get("ok"));
      assertEquals(7L, stale.get("highest"));
      assertEquals(true, write(c1, "n1", 1).get("ok"), "each name has its own highest token");
      register.record(Event.of(Event.Type.FAULT_START).withFault("pause", 1, "c1"));
      c2.send(Event.of(Event.Type.RELEASE).withName("n0").withToken(7).withGrant(1));

      List<Event> events = history.events();
      for (int i = 0; i < events.size(); i++) {
        assertEquals(i + 1, events.get(i).seq(), "one sequence for the clients and the harness");
      }
      assertEquals(List.of(Event.Type.HELLO, Event.Type.HELLO, Event.Type.WRITE, Event.Type.WRITE, Event.Type.WRITE,
          Event.Type.STALE, Event.Type.WRITE, Event.Type.FAULT_START, Event.Type.RELEASE),
          events.stream().map(Event::type).toList());
      assertEquals("c1", events.get(5).client(), "the client is the connection's, from its hello");
      assertEquals(1, register.count(Event.Type.STALE));
    }
  }

  @Test
  void aClientMustSayHelloFirstAndCannotReportWhatOnlyTheHarnessRecords() {
    History history = new History();
    try (Register register = new Register(history, System.nanoTime())) {
      Worker.Reporter anonymous = new Worker.Reporter(register.address(), "c9");
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> anonymous.send(Event.of(Event.Type.WRITE).withName("n0").withToken(1).withGrant(1)));
      assertTrue(e.getMessage().contains("the first line must be a hello"), e.getMessage());
      Worker.Reporter c1 = new Worker.Reporter(register.address(), "c1");
      c1.hello("provider=test");
      e = assertThrows(IllegalStateException.class,
          () -> c1.send(Event.of(Event.Type.FAULT_START).withFault("kill", 1, "c2")));
      assertTrue(e.getMessage().contains("a client cannot report 'fault-start'"), e.getMessage());
      assertEquals(List.of(Event.Type.HELLO), history.events().stream().map(Event::type).toList());
    }
  }

  private static Map<String, Object> write(Worker.Reporter c, String name, long token) {
    return c.send(Event.of(Event.Type.WRITE).withName(name).withToken(token).withGrant(token));
  }
}
