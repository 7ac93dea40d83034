package dev.tumbler.peer.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.PeerMessage;
import dev.tumbler.peer.core.RemoteSessions;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A member's side of the client channel, alone: sessions, refusals, the echo and vouching, expiry. */
class ClientGatewayTest {

  private static final long T = 120_000_000L;

  private final ClientGateway gateway = new ClientGateway("n0", List.of("n1", "n2"), "lease", T, true);

  private ClientGateway.Work<PeerMessage> step(long now, String from, ClientMessage m) {
    ClientGateway.Work<PeerMessage> w = new ClientGateway.Work<>();
    gateway.message(now, from, m, w);
    return w;
  }

  private static ClientMessage.Hello hello(long session, long seq) {
    return new ClientMessage.Hello(session, seq, "lease", T, List.of(), List.of());
  }

  @Test
  void membersAreNotClients() {
    assertTrue(gateway.isMember("n0") && gateway.isMember("n2"));
    assertFalse(gateway.isMember("c0"));
    assertTrue(ClientGateway.owns(ClientGateway.FIRST_ID) && !ClientGateway.owns(1));
  }

  @Test
  void aSessionIsRefusedForAnotherAlgorithmOrTermOrAnUnleasedCluster() {
    var w = step(0, "c0", new ClientMessage.Hello(7, 1, "agent", T, List.of(), List.of()));
    ClientMessage.Refused r = assertInstanceOf(ClientMessage.Refused.class, w.replies().get(0).message());
    assertTrue(r.reason().contains("runs algorithm lease, not agent"), r.reason());
    w = step(0, "c0", new ClientMessage.Hello(7, 1, "lease", T / 2, List.of(), List.of()));
    r = assertInstanceOf(ClientMessage.Refused.class, w.replies().get(0).message());
    assertTrue(r.reason().contains("leaseTime is 120 ms, not 60 ms"), r.reason());
    ClientGateway lamport = new ClientGateway("n0", List.of("n1"), "lamport", 0, false);
    ClientGateway.Work<PeerMessage> lw = new ClientGateway.Work<>();
    lamport.message(0, "c0", new ClientMessage.Hello(7, 1, "lamport", 0, List.of(), List.of()), lw);
    r = assertInstanceOf(ClientMessage.Refused.class, lw.replies().get(0).message());
    assertTrue(r.reason().contains("grants locks until they are released"), r.reason());
    assertEquals(0, gateway.sessions());
  }

  @Test
  void aMessageOfAnUnknownSessionIsAnsweredGone() {
    var w = step(0, "c0", new ClientMessage.Ping(42, 3));
    assertInstanceOf(ClientMessage.Gone.class, w.replies().get(0).message());
    assertTrue(w.inputs().isEmpty());
  }

  @Test
  void requestsBecomeInputsOfTheSessionAndGrantsAreVouchedFromTheReply() {
    step(0, "c0", hello(7, 1));
    var w = step(1_000, "c0", new ClientMessage.Acquire(7, 2, 5, Claim.exclusive("x"), false, 0));
    Input.Acquire<PeerMessage> a = assertInstanceOf(Input.Acquire.class, w.inputs().get(0));
    assertTrue(ClientGateway.owns(a.requestId()));
    assertTrue(RemoteSessions.remote(a.session()), a.session());
    // the core grants with its own window; the reply says how much of it is left, and of the session
    ClientGateway.Work<PeerMessage> g = new ClientGateway.Work<>();
    gateway.output(10_000, new Output.Granted<>(a.requestId(), "x", 9, 1, 5_000, 5_000 + T / 4 * 3), g);
    ClientMessage.Granted granted = assertInstanceOf(ClientMessage.Granted.class, g.replies().get(0).message());
    assertEquals(5, granted.req());
    assertEquals(2, granted.echo(), "the highest message number heard");
    assertEquals(5_000 + T / 4 * 3 - 10_000, granted.validFor());
    assertEquals(1_000 + T / 4 * 3 - 10_000, granted.sessionFor(), "from when the echoed message came");
  }

  @Test
  void aSilentSessionExpiresAfterATermAndEverythingOfItIsClosed() {
    step(0, "c0", hello(7, 1));
    step(10, "c0", new ClientMessage.Acquire(7, 2, 5, Claim.exclusive("x"), false, 0));
    ClientGateway.Work<PeerMessage> w = new ClientGateway.Work<>();
    gateway.tick(T - 1, w);
    assertTrue(w.inputs().isEmpty(), "heard from less than a term ago");
    gateway.tick(T + 10, w);
    assertInstanceOf(Input.CloseSession.class, w.inputs().get(0));
    assertEquals(0, gateway.sessions());
    // a grant of a closed session's request that was on its way is given back
    ClientGateway.Work<PeerMessage> late = new ClientGateway.Work<>();
    gateway.output(T + 20, new Output.Granted<>(ClientGateway.FIRST_ID, "x", 9, 1, 0, T / 4 * 3), late);
    assertInstanceOf(Input.Release.class, late.inputs().get(0));
    assertTrue(late.replies().isEmpty());
  }

  @Test
  void aRestatementReleasesWhatTheClientNoLongerHasAndTellsAGrantAgain() {
    step(0, "c0", hello(7, 1));
    var w = step(1, "c0", new ClientMessage.Acquire(7, 2, 5, Claim.exclusive("x"), false, 0));
    long x = ((Input.Acquire<PeerMessage>) w.inputs().get(0)).requestId();
    w = step(2, "c0", new ClientMessage.Acquire(7, 3, 6, Claim.exclusive("y"), false, 0));
    gateway.output(3, new Output.Granted<>(x, "x", 9, 1, 0, T / 4 * 3), new ClientGateway.Work<>());
    // the link broke; the client lost its grant of x's reply and gave up y: it restates x as waiting, y not at all
    w = step(4, "c0", new ClientMessage.Hello(7, 9, "lease", T, List.of(
        new ClientMessage.Asked(5, Claim.exclusive("x"), false, 0, false)), List.of()));
    assertTrue(w.inputs().stream().anyMatch(i -> i instanceof Input.Cancel<?>), "the wait for y cancelled");
    assertTrue(w.replies().stream().anyMatch(r -> r.message() instanceof ClientMessage.Granted g && g.req() == 5),
        "the grant of x told again");
  }

  @Test
  void aClientCannotOpenSessionsWithoutBound() {
    for (int i = 0; i < ClientGateway.MAX_SESSIONS_PER_CLIENT; i++) {
      assertInstanceOf(ClientMessage.Welcome.class, step(0, "c0", hello(i + 1, 1)).replies().get(0).message());
    }
    ClientMessage.Refused r = assertInstanceOf(ClientMessage.Refused.class,
        step(0, "c0", hello(999, 1)).replies().get(0).message());
    assertTrue(r.reason().contains("no more"), r.reason());
    assertInstanceOf(ClientMessage.Welcome.class, step(0, "c1", hello(999, 1)).replies().get(0).message(),
        "another client is not held back by the first");
  }

  @Test
  void aMemberThatLeavesTellsEverySessionItIsStoppingAndOpensNoMoreButReleasesNothing() {
    step(0, "c0", hello(7, 1));
    step(0, "c1", hello(8, 1));
    var acquired = step(1, "c0", new ClientMessage.Acquire(7, 2, 1, Claim.exclusive("x"), false, 0));
    assertEquals(1, acquired.inputs().size());
    ClientGateway.Work<PeerMessage> w = new ClientGateway.Work<>();
    gateway.leave(2, w);
    assertEquals(2, w.replies().size(), "every session");
    for (ClientGateway.Reply r : w.replies()) {
      ClientMessage.Gone g = assertInstanceOf(ClientMessage.Gone.class, r.message());
      assertTrue(g.stopping(), g.toString());
    }
    assertTrue(w.inputs().isEmpty(), "nothing released: a client trusts its grants until the Gone reaches it");
    var later = step(3, "c2", hello(9, 1));
    ClientMessage.Gone g = assertInstanceOf(ClientMessage.Gone.class, later.replies().get(0).message());
    assertTrue(g.stopping(), "a new session is not opened at a member that stops");
    assertEquals(2, gateway.sessions());
  }
}
