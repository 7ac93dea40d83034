package dev.tumbler.peer.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.TransactionOptions.Quorum;
import dev.tumbler.lock.spi.Ticker;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.TxOptions;
import dev.tumbler.peer.lamport.LamportCodec;
import dev.tumbler.peer.lamport.LamportMessage;
import dev.tumbler.peer.transport.InMemoryNetwork;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a transaction hears from its node comes after the lost listeners of the claims the core told lost before it.
 * An abort loses the transaction's held claims, fails its waiting ones, then aborts it; a holder told of the failure
 * ends the transaction (its {@code await} throws, it closes), and closing releases the held claims' leases, after
 * which a loss is no longer reported. So if the failure were told before a lost listener had run, the holder's
 * {@code onLost} never heard the claim taken from it: the TCK's {@code Transactions.deadlockAbort} through a thin
 * client failed that way now and then ("no onLost listener heard of the lock given up to break the deadlock").
 */
class PeerNodeTransactionTest {

  @ParameterizedTest(name = "the waiting claim listed {0}")
  @ValueSource(strings = {"after the held one", "before the held one"})
  void aTransactionHearsItsClaimFailAndItsAbortAfterTheLostListenersOfItsHeldClaims(String order) throws Exception {
    boolean waitingFirst = order.startsWith("before");
    ScriptedCore core = new ScriptedCore();
    InMemoryNetwork net = new InMemoryNetwork("tx-order-" + System.nanoTime(), Set.of(core.self()));
    try (PeerNode<LamportMessage> node = new PeerNode<>(core, new LamportCodec(), net.transport(core.self()),
        Ticker.system())) {
      node.start();
      AtomicBoolean lostReturned = new AtomicBoolean();
      AtomicReference<Boolean> failedAfterLost = new AtomicReference<>();
      AtomicReference<Boolean> abortedAfterLost = new AtomicReference<>();
      CountDownLatch granted = new CountDownLatch(1);
      CountDownLatch ended = new CountDownLatch(2);
      long tx = node.begin("s1", new TxOptions(true, Quorum.ALL, List.of(), 0), new PeerNode.TransactionListener() {
        @Override
        public void granted(PeerNode.Outcome o) {
          granted.countDown();
        }

        @Override
        public void failed(PeerNode.Outcome o) {
          failedAfterLost.set(lostReturned.get());
          ended.countDown();
        }

        @Override
        public void aborted(Output.Failure failure, Set<String> missingPeers, String detail) {
          abortedAfterLost.set(lostReturned.get());
          ended.countDown();
        }
      });

      long held = node.newRequestId();
      core.answer(List.of(new Output.Granted<>(held, "t/x", 7)));
      node.acquire(held, tx, Claim.tx(List.of("t", "x"), Claim.Mode.WRITE));
      assertTrue(granted.await(5, TimeUnit.SECONDS), "the first claim was not granted");
      CountDownLatch letListenerReturn = new CountDownLatch(1);
      node.onLost(held, (reason, detail) -> {
        try {
          letListenerReturn.await(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        lostReturned.set(true);
      });

      // the second claim closes a deadlock; the core aborts the transaction: the held claim lost, the waiting one
      // failed, the transaction aborted, in one step
      long waiting = node.newRequestId();
      // (the core lists an abort's claims in the order they were asked for: the waiting one may come first)
      Output<LamportMessage> lost = new Output.Lost<>(held, "t/x", Output.LostReason.DEADLOCK,
          "chosen to break a deadlock");
      Output<LamportMessage> failed = new Output.Failed<>(waiting, "t/y", Output.Failure.DEADLOCK, Set.of(),
          "chosen to break a deadlock");
      core.answer(List.of(waitingFirst ? failed : lost, waitingFirst ? lost : failed,
          new Output.TxAborted<>(tx, Output.Failure.DEADLOCK, Set.of(), "chosen to break a deadlock")));
      node.acquire(waiting, tx, Claim.tx(List.of("t", "y"), Claim.Mode.WRITE));

      letListenerReturn.countDown();
      assertTrue(ended.await(5, TimeUnit.SECONDS), "the transaction did not hear its failure and abort");
      assertEquals(Boolean.TRUE, failedAfterLost.get(),
          "the failed claim was told while the lost listener of the held claim had not returned");
      assertEquals(Boolean.TRUE, abortedAfterLost.get(),
          "the abort was told while the lost listener of the held claim had not returned");
    }
  }

  /**
   * A transaction's lease is made, and listens for its loss, when the transaction is told of the grant, after the step
   * that granted it: a claim surrendered to break a deadlock right after its grant was lost before its lease listened.
   * The loss was dropped; the lease stayed valid while another transaction held the lock, and its first renewal lost
   * it as REVOKED (the TCK's {@code Transactions.deadlockSurrender} on the native agent over TCP: "lost events: [...
   * reason=REVOKED ...]"). The node keeps such a loss for the lease, and only for a grant whose lease has not listened
   * yet: a claim granted again after its loss gets a lease of its own that hears only its own loss.
   */
  @Test
  void aLossSaidBeforeTheGrantsLeaseListensReachesItAndNoOther() throws Exception {
    ScriptedCore core = new ScriptedCore();
    InMemoryNetwork net = new InMemoryNetwork("tx-unbound-" + System.nanoTime(), Set.of(core.self()));
    try (PeerNode<LamportMessage> node = new PeerNode<>(core, new LamportCodec(), net.transport(core.self()),
        Ticker.system())) {
      node.start();
      BlockingQueue<PeerNode.Outcome> grants = new ArrayBlockingQueue<>(4);
      long tx = node.begin("s1", new TxOptions(false, Quorum.ALL, List.of(), 0), new PeerNode.TransactionListener() {
        @Override
        public void granted(PeerNode.Outcome o) {
          grants.add(o); // the lease listens later, below: as a transaction told late would
        }

        @Override
        public void failed(PeerNode.Outcome o) {}

        @Override
        public void aborted(Output.Failure failure, Set<String> missingPeers, String detail) {}
      });
      long claim = node.newRequestId();
      long far = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
      // granted, then (in the step of another claim) surrendered to break a deadlock, and granted again
      core.answer(List.of(new Output.Granted<>(claim, "t/x", 7, 1, 0, far)));
      node.acquire(claim, tx, Claim.tx(List.of("t", "x"), Claim.Mode.WRITE));
      core.answer(List.of(new Output.Lost<>(claim, "t/x", Output.LostReason.DEADLOCK, "surrendered"),
          new Output.Granted<>(claim, "t/x", 9, 1, 0, far)));
      node.acquire(node.newRequestId(), tx, Claim.tx(List.of("t", "y"), Claim.Mode.WRITE));
      assertEquals(7, grants.poll(5, TimeUnit.SECONDS).fencingToken());
      assertEquals(9, grants.poll(5, TimeUnit.SECONDS).fencingToken());

      BlockingQueue<Output.LostReason> first = new ArrayBlockingQueue<>(4);
      node.onLost(claim, (reason, detail) -> first.add(reason));
      assertEquals(Output.LostReason.DEADLOCK, first.poll(5, TimeUnit.SECONDS),
          "the first grant's lease did not hear the loss the core said before it listened");
      BlockingQueue<Output.LostReason> second = new ArrayBlockingQueue<>(4);
      node.onLost(claim, (reason, detail) -> second.add(reason));
      assertNull(second.poll(300, TimeUnit.MILLISECONDS), "the second grant's lease heard the first grant's loss");

      // its own loss it hears; a renewal's answer that the claim is lost, once nobody listens, is kept for no one
      core.answer(List.of(new Output.Lost<>(claim, "t/x", Output.LostReason.EXPIRED, ""),
          new Output.Lost<>(claim, "t/x", Output.LostReason.REVOKED, "not held")));
      node.acquire(node.newRequestId(), tx, Claim.tx(List.of("t", "z"), Claim.Mode.WRITE));
      assertEquals(Output.LostReason.EXPIRED, second.poll(5, TimeUnit.SECONDS), "the second lease missed its loss");
      core.answer(List.of(new Output.Granted<>(claim, "t/x", 11, 1, 0, far)));
      node.acquire(node.newRequestId(), tx, Claim.tx(List.of("t", "w"), Claim.Mode.WRITE));
      assertEquals(11, grants.poll(5, TimeUnit.SECONDS).fencingToken());
      BlockingQueue<Output.LostReason> third = new ArrayBlockingQueue<>(4);
      node.onLost(claim, (reason, detail) -> third.add(reason));
      assertNull(third.poll(300, TimeUnit.MILLISECONDS), "a loss said while no grant waited for its lease was kept");
      assertEquals(1, node.heldLocks(), "the third lease does not listen");
    }
  }
}
