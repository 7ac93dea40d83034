package dev.tumbler.peer.composite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.CodecException;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Leader;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.PeerMessage;
import dev.tumbler.peer.core.ProtocolCore;
import dev.tumbler.peer.lamport.LamportAlgorithm;
import dev.tumbler.peer.lamport.LamportCodec;
import dev.tumbler.peer.lamport.LamportMessage;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Routing in {@link CompositeCore}: messages and timers reach the channel they belong to and leave tagged
 * with it, link changes reach every core with the election first, a client's later inputs follow its
 * request, and a view the election publishes reaches the other cores within the same step.
 */
class CompositeCoreTest {

  /** A scripted channel core that records its inputs and answers a few of them. */
  private static class Recorder implements ProtocolCore<LamportMessage> {
    final String name;
    final List<String> log;

    Recorder(String name, List<String> log) {
      this.name = name;
      this.log = log;
    }

    @Override
    public List<Output<LamportMessage>> step(long now, Input<LamportMessage> input) {
      log.add(name + ":" + input.getClass().getSimpleName());
      List<Output<LamportMessage>> out = new ArrayList<>();
      switch (input) {
        case Input.PeerUp<LamportMessage> u -> {
          out.add(new Output.SetTimer<>(7, now + 10));
          out.add(new Output.Send<>(u.peer(), new LamportMessage.Ack(1)));
        }
        case Input.TimerFired<LamportMessage> t -> {
          log.add(name + ":timer " + t.timerId());
          if (name.equals("election")) {
            out.add(new Output.Fact<>(new Observation.View(3, List.of(new Leader("a", 1)), now + 5)));
          }
        }
        case Input.Acquire<LamportMessage> a -> out.add(new Output.Granted<>(a.requestId(), a.claim().name(), 9));
        case Input.Renew<LamportMessage> r -> out.add(new Output.Renewed<>(r.requestId(), 1, 2));
        case Input.View<LamportMessage> v -> log.add(name + ":view " + v.term());
        case Input.HolderQuery<LamportMessage> q -> out.add(new Output.Holder<>(q.queryId(), q.name(), name));
        case Input.PermitsQuery<LamportMessage> q -> out.add(Output.Permits.unknown(q));
        case Input.ListQuery<LamportMessage> q -> out.add(Output.Listing.unknown(q));
        default -> { }
      }
      return out;
    }

    @Override
    public String self() {
      return "a";
    }

    @Override
    public String algorithm() {
      return name;
    }
  }

  @Test
  void inputsReachTheirChannelAndOutputsCarryIt() {
    List<String> log = new ArrayList<>();
    Map<Channel, ProtocolCore<? extends PeerMessage>> cores = new EnumMap<>(Channel.class);
    cores.put(Channel.BUCKETS, new Recorder("buckets", log));
    cores.put(Channel.LOCK, new Recorder("lock", log));
    cores.put(Channel.ELECTION, new Recorder("election", log));
    CompositeCore c = new CompositeCore(cores);
    assertEquals("lock", c.algorithm());

    c.step(0, new Input.Start<>());
    assertEquals(List.of("election:Start", "lock:Start", "buckets:Start"), log, "every core starts, election first");
    log.clear();
    List<Output<Envelope>> up = c.step(0, new Input.PeerUp<>("b"));
    assertEquals(List.of("election:PeerUp", "lock:PeerUp", "buckets:PeerUp"), log, "election first, then in order");
    List<Long> timers = new ArrayList<>();
    List<Channel> sentOn = new ArrayList<>();
    for (Output<Envelope> o : up) {
      if (o instanceof Output.SetTimer<Envelope> t) {
        timers.add(t.timerId());
      } else if (o instanceof Output.Send<Envelope> s) {
        sentOn.add(s.message().channel());
      }
    }
    assertEquals(List.of(Channel.ELECTION, Channel.LOCK, Channel.BUCKETS), sentOn);
    assertEquals(List.of(7L, 1L << 56 | 7, 2L << 56 | 7), timers, "timer ids carry the channel");

    // the lock core's timer goes back to the lock core, with its own id
    log.clear();
    c.step(1, new Input.TimerFired<>(1L << 56 | 7));
    assertEquals(List.of("lock:TimerFired", "lock:timer 7"), log);

    // the election's view reaches every other core in the same step, after the election's own outputs
    log.clear();
    List<Output<Envelope>> viewStep = c.step(2, new Input.TimerFired<>(7));
    assertInstanceOf(Output.Fact.class, viewStep.getFirst());
    assertEquals(List.of("election:TimerFired", "election:timer 7", "lock:View", "lock:view 3", "buckets:View",
        "buckets:view 3"), log);

    // a semaphore claim goes to the buckets core, and its renewal follows it there
    log.clear();
    c.step(3, new Input.Acquire<>(41, "s", Claim.permits("p", 1, 2), false));
    c.step(3, new Input.Acquire<>(42, "s", Claim.exclusive("x"), false));
    c.step(4, new Input.Renew<>(41));
    c.step(4, new Input.Renew<>(42));
    assertEquals(List.of("buckets:Acquire", "lock:Acquire", "buckets:Renew", "lock:Renew"), log);

    // a message for a channel goes to that core only
    log.clear();
    c.step(5, new Input.Message<>("b", new Envelope(Channel.BUCKETS, new LamportMessage.Ack(4))));
    assertEquals(List.of("buckets:Message"), log);

    // who holds a name is the lock core's to say, and its answer passes through as it is
    log.clear();
    List<Output<Envelope>> answer = c.step(6, new Input.HolderQuery<>(8, "x"));
    assertEquals(List.of("lock:HolderQuery"), log);
    assertEquals(List.of(new Output.Holder<>(8, "x", "lock")), answer);
  }

  @Test
  void aSessionClosedForgetsItsRoutes() {
    List<String> log = new ArrayList<>();
    Map<Channel, ProtocolCore<? extends PeerMessage>> cores = new EnumMap<>(Channel.class);
    cores.put(Channel.LOCK, new Recorder("lock", log));
    cores.put(Channel.BUCKETS, new Recorder("buckets", log));
    CompositeCore c = new CompositeCore(cores);
    c.step(0, new Input.Acquire<>(1, "s", Claim.permits("p", 1, 2), false));
    c.step(0, new Input.CloseSession<>("s"));
    log.clear();
    c.step(0, new Input.Renew<>(1)); // forgotten: the lock core, which answers for unknown requests
    assertEquals(List.of("lock:Renew"), log);
  }

  @Test
  void aCompositeWithoutALockCoreOrWithTwoNodesIsRefused() {
    List<String> log = new ArrayList<>();
    assertThrows(IllegalArgumentException.class, () -> new CompositeCore(Map.of(Channel.BUCKETS,
        new Recorder("b", log))));
    Recorder other = new Recorder("x", log) {
      @Override
      public String self() {
        return "z";
      }
    };
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new CompositeCore(Map.of(Channel.LOCK, new Recorder("l", log), Channel.BUCKETS, other)));
    assertTrue(e.getMessage().contains("different nodes"), e.getMessage());
  }

  @Test
  void envelopesRoundTripAndBadOnesAreCodecErrors() {
    EnvelopeCodec codec = Hosting.codec(LamportAlgorithm.LAMPORT);
    Envelope e = new Envelope(Channel.LOCK, new LamportMessage.Request("x", 5, true));
    byte[] bytes = codec.encode(e);
    assertEquals(EnvelopeCodec.VERSION, bytes[0]);
    assertEquals(Channel.LOCK.number(), bytes[1]);
    byte[] body = new LamportCodec().encode((LamportMessage) e.body());
    assertTrue(Arrays.equals(body, Arrays.copyOfRange(bytes, 2, bytes.length)), "the body is the core's own bytes");
    assertEquals(e, codec.decode(bytes));
    assertEquals("lock/Request", e.typeName());

    byte[] otherChannel = bytes.clone();
    otherChannel[1] = Channel.BUCKETS.number();
    assertTrue(assertThrows(CodecException.class, () -> codec.decode(otherChannel)).getMessage()
        .contains("does not host"));
    byte[] unknownChannel = bytes.clone();
    unknownChannel[1] = 99;
    assertThrows(CodecException.class, () -> codec.decode(unknownChannel));
    byte[] badVersion = bytes.clone();
    badVersion[0] = 2;
    assertThrows(CodecException.class, () -> codec.decode(badVersion));
    assertThrows(CodecException.class, () -> codec.decode(new byte[] {1, 1}));
    byte[] trailing = Arrays.copyOf(bytes, bytes.length + 1);
    assertThrows(CodecException.class, () -> codec.decode(trailing), "the body codec rejects trailing bytes");
  }
}
