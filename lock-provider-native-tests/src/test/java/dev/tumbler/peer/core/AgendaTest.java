package dev.tumbler.peer.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What the bakery's owner and client timers visit instead of every run and request they keep. */
class AgendaTest {

  private static final long NONE = Long.MIN_VALUE; // the bakery's "no moment"

  private static final class Item extends Agenda.Item {
    final int id;
    /** What the item has to do, as the walk this replaces would find it: the moment, or NONE. */
    long wakeUp = NONE;

    Item(int id) {
      this.id = id;
    }

    @Override
    public String toString() {
      return "#" + id;
    }
  }

  private final Agenda<Item> agenda = new Agenda<>();
  private final Item a = new Item(1);
  private final Item b = new Item(2);
  private final Item c = new Item(3);

  @BeforeEach
  void addThreeItems() {
    agenda.add(a);
    agenda.add(b);
    agenda.add(c);
  }

  @Test
  void visitsWatchedAndDueItemsInTheOrderTheyWereAdded() {
    agenda.rest(a, 50);
    agenda.rest(b, Agenda.NONE);
    assertEquals(List.of(c), visit(agenda, 0));
    assertEquals(List.of(a, c), visit(agenda, 50), "due at its moment, in its place");
    agenda.rest(a, 60);
    agenda.rest(c, 10);
    assertEquals(List.of(), visit(agenda, 9), "not a nanosecond early");
    agenda.watch(b);
    assertEquals(List.of(b, c), visit(agenda, 10));
    agenda.remove(b);
    agenda.remove(c);
    assertEquals(List.of(a), visit(agenda, 60));
    agenda.rest(a, Agenda.NONE);
    assertEquals(List.of(), visit(agenda, Long.MAX_VALUE - 1), "resting with no moment waits to be watched");
  }

  @Test
  void anItemWatchedDuringAVisitIsVisitedInItOnlyIfItComesLater() {
    agenda.rest(a, Agenda.NONE);
    agenda.rest(c, Agenda.NONE);
    List<Item> seen = new ArrayList<>();
    agenda.visit(0, i -> {
      seen.add(i);
      agenda.watch(a); // before b: the next visit
      agenda.watch(c); // after b: this one
      agenda.rest(i, Agenda.NONE);
    });
    assertEquals(List.of(b, c), seen);
    assertEquals(List.of(a), visit(agenda, 0), "a waited for the next visit, and c, let rest, left");
  }

  @Test
  void agreesWithAWalkOfEveryItemUnderRandomChanges() {
    Random random = new Random(11);
    Agenda<Item> agenda = new Agenda<>(); // its own: none of the three above
    List<Item> all = new ArrayList<>();
    int ids = 0;
    long now = 0;
    for (int step = 0; step < 20_000; step++) {
      int op = random.nextInt(10);
      if (op < 3 || all.isEmpty()) {
        Item i = new Item(++ids);
        i.wakeUp = random.nextBoolean() ? NONE : now + random.nextInt(100);
        all.add(i);
        agenda.add(i);
      } else if (op < 5) {
        Item i = all.get(random.nextInt(all.size()));
        i.wakeUp = random.nextBoolean() ? NONE : now + random.nextInt(100);
        agenda.watch(i); // what the cores do when something changes an item
      } else if (op < 6) {
        Item i = all.remove(random.nextInt(all.size()));
        agenda.remove(i);
      } else {
        now += random.nextInt(30);
        // the walk it replaces: every item with something to do by now, in the order they were added
        List<Item> expected = new ArrayList<>();
        long earliest = NONE;
        for (Item i : all) {
          if (i.wakeUp != NONE && i.wakeUp <= now) {
            expected.add(i);
          }
        }
        List<Item> got = new ArrayList<>();
        final long at = now;
        agenda.visit(now, i -> {
          if (i.wakeUp != NONE && i.wakeUp <= at) {
            got.add(i);
            i.wakeUp = random.nextInt(3) == 0 ? NONE : at + 1 + random.nextInt(100); // done: its next moment
          }
          agenda.rest(i, i.wakeUp == NONE ? Agenda.NONE : i.wakeUp);
        });
        assertEquals(expected, got, "step " + step);
        for (Item i : all) {
          if (i.wakeUp != NONE && (earliest == NONE || i.wakeUp < earliest)) {
            earliest = i.wakeUp;
          }
        }
        assertEquals(earliest, agenda.earliest(i -> i.wakeUp, NONE), "step " + step);
      }
    }
  }

  private static List<Item> visit(Agenda<Item> agenda, long now) {
    List<Item> seen = new ArrayList<>();
    agenda.visit(now, seen::add);
    return seen;
  }
}
