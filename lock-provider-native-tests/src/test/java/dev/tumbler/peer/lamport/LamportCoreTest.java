package dev.tumbler.peer.lamport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Output;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Scripted runs of the core: every message delivered at once, in order, unless a link is cut. */
class LamportCoreTest {

  private static final long TIMEOUT = 1_000;

  /** A tiny synchronous cluster. */
  private static final class Net {
    final Map<String, LamportCore> cores = new LinkedHashMap<>();
    final Deque<Object[]> inFlight = new ArrayDeque<>();
    final List<Output<LamportMessage>> seen = new ArrayList<>();
    final Set<String> cut = new java.util.HashSet<>();
    long now;
    int sent;

    Net(LamportCore.Variant v, String... ids) {
      for (String id : ids) {
        List<String> peers = new ArrayList<>(List.of(ids));
        peers.remove(id);
        cores.put(id, new LamportCore(id, peers, v, TIMEOUT, 0));
      }
      for (String a : ids) {
        for (String b : ids) {
          if (!a.equals(b)) {
            step(a, new Input.PeerUp<>(b));
          }
        }
      }
      drain();
    }

    void step(String node, Input<LamportMessage> in) {
      for (Output<LamportMessage> o : cores.get(node).step(now, in)) {
        seen.add(o);
        if (o instanceof Output.Send<LamportMessage> s) {
          sent++;
          if (!cut.contains(node + s.to())) {
            inFlight.add(new Object[] {node, s.to(), s.message()});
          }
        }
      }
    }

    void drain() {
      while (!inFlight.isEmpty()) {
        Object[] m = inFlight.poll();
        step((String) m[1], new Input.Message<>((String) m[0], (LamportMessage) m[2]));
      }
    }

    <T> List<T> outputs(Class<T> type) {
      List<T> l = new ArrayList<>();
      for (Output<LamportMessage> o : seen) {
        if (type.isInstance(o)) {
          l.add(type.cast(o));
        }
      }
      return l;
    }
  }

  @Test
  void aClaimItCannotServeFailsAndOnlyAHeldGrantIsRenewed() {
    for (LamportCore.Variant v : LamportCore.Variant.values()) {
      Net net = new Net(v, "a", "b");
      net.step("a", new Input.Acquire<>(1, "s", Claim.read("x"), false));
      Output.Failed<?> f = net.outputs(Output.Failed.class).getFirst();
      assertEquals(Output.Failure.UNAVAILABLE, f.failure(), v.toString());
      assertTrue(f.detail().contains("exclusive locks on one name only"), f.detail());
      net.step("a", new Input.Acquire<>(2, "s", Claim.permits("y", 1, 3), false));
      assertEquals(2, net.outputs(Output.Failed.class).size(), v + ": a semaphore claim is not served either");
      assertEquals(0, net.cores.get("a").openRequests(), v.toString());

      net.step("a", new Input.Acquire<>(3, "s", Claim.exclusive("x"), false));
      net.drain();
      assertEquals(1, net.outputs(Output.Granted.class).size(), v.toString());
      assertTrue(net.outputs(Output.Granted.class).getFirst().unbounded(), v + ": no term");
      net.step("a", new Input.Renew<>(3));
      Output.Renewed<?> r = net.outputs(Output.Renewed.class).getFirst();
      assertEquals(Long.MAX_VALUE, r.validUntil(), v.toString());
      net.step("a", new Input.Release<>(3));
      net.step("a", new Input.Renew<>(3));
      Output.Lost<?> l = net.outputs(Output.Lost.class).getFirst();
      assertEquals(Output.LostReason.REVOKED, l.reason(), v + ": a released grant is not renewed");
    }
  }

  @Test
  void lamportEntryCostsThreeTimesNMinusOne() {
    Net net = new Net(LamportCore.Variant.LAMPORT, "a", "b", "c");
    int before = net.sent;
    for (long id = 1; id <= 3; id++) {
      net.step("a", new Input.Acquire<>(id, "s", Claim.exclusive("x"), false));
      net.drain();
      assertEquals(id, net.outputs(Output.Granted.class).getLast().requestId());
      net.step("a", new Input.Release<>(id));
      net.drain();
    }
    // the third release is still held back: nobody waits for it, and it goes with a's next message
    assertEquals(3 * 2 * 3 - 2, net.sent - before);
  }

  @Test
  void aLamportReleaseGoesAtOnceToAWaitingPeerAndWithTheNextMessageToAnIdleOne() {
    Net net = new Net(LamportCore.Variant.LAMPORT, "a", "b", "c");
    net.step("a", new Input.Acquire<>(1, "s", Claim.exclusive("x"), false));
    net.drain();
    net.step("b", new Input.Acquire<>(2, "s", Claim.exclusive("x"), false));
    net.drain();
    assertEquals(1, net.outputs(Output.Granted.class).size(), "b waits behind a");
    int seen = net.seen.size();
    net.step("a", new Input.Release<>(1));
    List<String> to = new ArrayList<>();
    for (Output<LamportMessage> o : net.seen.subList(seen, net.seen.size())) {
      if (o instanceof Output.Send<LamportMessage> m && m.message() instanceof LamportMessage.Release) {
        to.add(m.to());
      }
    }
    assertEquals(List.of("b"), to, "the release goes to the waiting peer b only; c has no request on x");
    net.drain();
    assertEquals(2, net.outputs(Output.Granted.class).getLast().requestId(), "b enters at once");
    // c asks later: its queue still has a's released request, and a's acknowledgement brings the release first
    net.step("b", new Input.Release<>(2));
    net.drain();
    net.step("c", new Input.Acquire<>(3, "s", Claim.exclusive("x"), false));
    net.drain();
    assertEquals(3, net.outputs(Output.Granted.class).getLast().requestId(), "c enters once a and b answer");
    assertEquals(1, net.cores.get("c").openRequests(), "c holds its one request");
  }

  @Test
  void aReleaseHeldBackIsSentOnItsOwnWhenTheReleaseTimerFires() {
    Net net = new Net(LamportCore.Variant.LAMPORT, "a", "b", "c");
    net.step("a", new Input.Acquire<>(1, "s", Claim.exclusive("x"), false));
    net.drain();
    int seen = net.seen.size();
    net.step("a", new Input.Release<>(1));
    List<Output<LamportMessage>> released = List.copyOf(net.seen.subList(seen, net.seen.size()));
    assertTrue(released.stream().noneMatch(o -> o instanceof Output.Send<LamportMessage>), "nobody waits: held "
        + released);
    assertTrue(released.contains(new Output.SetTimer<LamportMessage>(LamportCore.RELEASE_TIMER,
        net.now + LamportCore.RELEASE_HOLD_NANOS)), "the release timer is set: " + released);
    assertEquals(1, net.cores.get("b").activeNames(), "b still queues a's released request");
    net.now += LamportCore.RELEASE_HOLD_NANOS;
    net.step("a", new Input.TimerFired<>(LamportCore.RELEASE_TIMER));
    net.drain();
    assertEquals(0, net.cores.get("b").activeNames(), "the release reached b");
    assertEquals(0, net.cores.get("c").activeNames(), "the release reached c");
  }

  @Test
  void ricartAgrawalaEntryCostsTwiceNMinusOne() {
    Net net = new Net(LamportCore.Variant.RICART_AGRAWALA, "a", "b", "c");
    int before = net.sent;
    net.step("a", new Input.Acquire<>(1, "s", Claim.exclusive("x"), false));
    net.drain();
    assertEquals(1, net.outputs(Output.Granted.class).size());
    net.step("a", new Input.Release<>(1));
    net.drain();
    assertEquals(2 * 2, net.sent - before);
  }

  @Test
  void concurrentRequestsAreGrantedInTimestampOrderWithIncreasingTokens() {
    for (LamportCore.Variant v : LamportCore.Variant.values()) {
      Net net = new Net(v, "a", "b");
      net.step("b", new Input.Acquire<>(1, "s", Claim.exclusive("x"), false));
      net.step("a", new Input.Acquire<>(2, "s", Claim.exclusive("x"), false));
      net.drain();
      List<Output.Granted> grants = net.outputs(Output.Granted.class);
      assertEquals(1, grants.size(), v + ": both granted at once");
      long first = grants.getFirst().requestId();
      String holder = first == 1 ? "b" : "a";
      net.step(holder, new Input.Release<>(first));
      net.drain();
      grants = net.outputs(Output.Granted.class);
      assertEquals(2, grants.size(), v.toString());
      assertTrue(grants.get(1).fencingToken() > grants.get(0).fencingToken(), v + ": tokens");
    }
  }

  @Test
  void attemptFailsContendedAndCancelFailsCancelled() {
    for (LamportCore.Variant v : LamportCore.Variant.values()) {
      Net net = new Net(v, "a", "b");
      net.step("a", new Input.Acquire<>(1, "s", Claim.exclusive("x"), false));
      net.drain();
      net.step("b", new Input.Acquire<>(2, "t", Claim.exclusive("x"), true));
      net.drain();
      net.step("b", new Input.Acquire<>(3, "t", Claim.exclusive("x"), false));
      net.drain();
      net.step("b", new Input.Cancel<>(3));
      List<Output.Failed> failed = net.outputs(Output.Failed.class);
      assertEquals(2, failed.size(), v + ": " + failed);
      assertEquals(Output.Failure.CONTENDED, failed.get(0).failure());
      assertEquals(2, failed.get(0).requestId());
      assertEquals(Output.Failure.CANCELLED, failed.get(1).failure());
      assertEquals(Set.of(), failed.get(1).missingPeers());
      net.drain();
      // closing the holder's session frees the lock
      net.step("a", new Input.CloseSession<>("s"));
      net.drain();
      net.step("b", new Input.Acquire<>(4, "t", Claim.exclusive("x"), true));
      net.drain();
      assertEquals(4, net.outputs(Output.Granted.class).getLast().requestId(), v.toString());
    }
  }

  @Test
  void unreachablePeerFailsTheRequestAfterPeerTimeoutNamingIt() {
    for (LamportCore.Variant v : LamportCore.Variant.values()) {
      Net net = new Net(v, "a", "b", "c");
      net.step("a", new Input.PeerDown<>("c"));
      net.cut.add("ac");
      net.step("a", new Input.Acquire<>(1, "s", Claim.exclusive("x"), false));
      net.drain();
      assertTrue(net.outputs(Output.Granted.class).isEmpty(), v + ": granted without c");
      Output.SetTimer<?> timer = net.outputs(Output.SetTimer.class).getLast();
      assertEquals(TIMEOUT, timer.at());
      net.now = timer.at();
      net.step("a", new Input.TimerFired<>(timer.timerId()));
      Output.Failed<?> f = net.outputs(Output.Failed.class).getFirst();
      assertEquals(Output.Failure.UNAVAILABLE, f.failure());
      assertEquals(Set.of("c"), f.missingPeers());
      // a single attempt fails at once
      net.step("a", new Input.Acquire<>(2, "s", Claim.exclusive("x"), true));
      assertEquals(Output.Failure.UNAVAILABLE, net.outputs(Output.Failed.class).getLast().failure());
    }
  }

  @Test
  void restartedPeerSyncDropsItsDeadEntries() {
    Net net = new Net(LamportCore.Variant.LAMPORT, "a", "b");
    net.step("b", new Input.Acquire<>(1, "s", Claim.exclusive("x"), false));
    net.drain();
    assertEquals(1, net.outputs(Output.Granted.class).size());
    // b crashes holding x, comes back empty
    net.step("a", new Input.PeerDown<>("b"));
    net.cores.put("b", new LamportCore("b", List.of("a"), LamportCore.Variant.LAMPORT, TIMEOUT, 0));
    net.step("a", new Input.PeerUp<>("b"));
    net.step("b", new Input.PeerUp<>("a"));
    net.drain();
    net.step("a", new Input.Acquire<>(2, "s", Claim.exclusive("x"), false));
    net.drain();
    List<Output.Granted> grants = net.outputs(Output.Granted.class);
    assertEquals(2, grants.size(), "the dead holder's entry still blocks x");
    assertTrue(grants.get(1).fencingToken() > grants.get(0).fencingToken());
  }

  /**
   * A request lost in a link flap, then a later message from the same peer on the new link before that
   * peer's Sync: the later message must not count as "stamped later" (it would let b grant while a's
   * lost, earlier request is still to be restated). Found by reasoning, pinned here; the random
   * simulator rarely builds this interleaving.
   */
  @Test
  void messageBeforeSyncAfterFlapDoesNotCountAsLater() {
    LamportCore a = new LamportCore("a", List.of("b"), LamportCore.Variant.LAMPORT, TIMEOUT, 0);
    LamportCore b = new LamportCore("b", List.of("a"), LamportCore.Variant.LAMPORT, TIMEOUT, 0);
    deliver(b, "a", sends(a.step(0, new Input.PeerUp<>("b"))));
    deliver(a, "b", sends(b.step(0, new Input.PeerUp<>("a"))));
    // the link flaps; a has not noticed yet and asks for x: that request is lost
    sends(a.step(0, new Input.Acquire<>(1, "s", Claim.exclusive("x"), false)));
    // b noticed the flap and the link is back; b asks for x too (its messages to a are held back)
    b.step(0, new Input.PeerDown<>("a"));
    List<LamportMessage> fromB = new ArrayList<>(sends(b.step(0, new Input.PeerUp<>("a"))));
    fromB.addAll(sends(b.step(0, new Input.Acquire<>(2, "t", Claim.exclusive("x"), false))));
    // a, still unaware, asks for other locks over the new link: stamped later than b's request
    List<Output<LamportMessage>> granted = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      for (LamportMessage m : sends(a.step(0, new Input.Acquire<>(10 + i, "s", Claim.exclusive("y" + i), false)))) {
        granted.addAll(b.step(0, new Input.Message<>("a", m)));
      }
    }
    assertTrue(granted.stream().noneMatch(o -> o instanceof Output.Granted<LamportMessage> g && g.requestId() == 2),
        "b granted x on a message from a that came before a's Sync: a's lost earlier request is not restated yet");
    // now a notices, resyncs, and exactly one of them gets x
    List<LamportMessage> fromA = new ArrayList<>(sends(a.step(0, new Input.PeerDown<>("b"))));
    fromA.addAll(sends(a.step(0, new Input.PeerUp<>("b"))));
    int grantsOfX = 0;
    for (LamportMessage m : fromB) {
      for (Output<LamportMessage> o : a.step(0, new Input.Message<>("b", m))) {
        grantsOfX += o instanceof Output.Granted<LamportMessage> g && g.name().equals("x") ? 1 : 0;
      }
    }
    for (LamportMessage m : fromA) {
      for (Output<LamportMessage> o : b.step(0, new Input.Message<>("a", m))) {
        grantsOfX += o instanceof Output.Granted<LamportMessage> g && g.name().equals("x") ? 1 : 0;
      }
    }
    assertTrue(grantsOfX <= 1, "x granted " + grantsOfX + " times");
  }

  private static List<LamportMessage> sends(List<Output<LamportMessage>> outs) {
    List<LamportMessage> l = new ArrayList<>();
    for (Output<LamportMessage> o : outs) {
      if (o instanceof Output.Send<LamportMessage> s) {
        l.add(s.message());
      }
    }
    return l;
  }

  private static void deliver(LamportCore to, String from, List<LamportMessage> messages) {
    for (LamportMessage m : messages) {
      to.step(0, new Input.Message<>(from, m));
    }
  }

  @Test
  void badConstruction() {
    assertThrows(IllegalArgumentException.class,
        () -> new LamportCore("a", List.of("a"), LamportCore.Variant.LAMPORT, 1, 0));
    assertThrows(IllegalArgumentException.class,
        () -> new LamportCore("a", List.of(), LamportCore.Variant.LAMPORT, 0, 0));
    List<String> many = new ArrayList<>();
    for (int i = 0; i < LamportCore.MAX_NODES; i++) {
      many.add("p" + i);
    }
    assertThrows(IllegalArgumentException.class,
        () -> new LamportCore("a", many, LamportCore.Variant.LAMPORT, 1, 0));
    LamportCore c = new LamportCore("a", List.of(), LamportCore.Variant.LAMPORT, 1, 0);
    c.step(0, new Input.Acquire<>(1, "s", Claim.exclusive("x"), false));
    assertThrows(IllegalStateException.class, () -> c.step(0, new Input.Acquire<>(1, "s", Claim.exclusive("y"), false)));
    assertEquals((5L << 10) | 3, LamportCore.fencingToken(5, 3));
  }

  @Test
  void aHolderQueryIsAnsweredAtOnceThatTheCoreCannotTell() {
    Net net = new Net(LamportCore.Variant.LAMPORT, "a", "b");
    net.step("a", new Input.Acquire<>(1, "s", Claim.exclusive("x").withTag("cand-1"), false));
    net.drain();
    for (String node : List.of("a", "b")) {
      List<Output<LamportMessage>> outs = net.cores.get(node).step(net.now, new Input.HolderQuery<>(7, "x"));
      assertEquals(List.of(new Output.Holder<>(7, "x", "")), outs.stream()
          .filter(o -> o instanceof Output.Holder<?>).toList(), "asked on " + node);
      assertTrue(outs.stream().noneMatch(o -> o instanceof Output.Send<?>), "nobody is asked");
    }
  }
}
