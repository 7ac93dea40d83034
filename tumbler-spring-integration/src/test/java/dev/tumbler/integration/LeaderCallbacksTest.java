package dev.tumbler.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.leader.event.LeaderEventPublisher;

/**
 * The order the initiator tells things in when the candidate steps down from inside its own {@code onGranted} (a
 * {@code yield()} there, as from an {@code OnGrantedEvent} listener, which runs on the same thread): the grant's event
 * is published before the revocation's, never after it, so that Spring's role controller does not start the role's
 * endpoints on an instance that is no longer leader.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LeaderCallbacksTest {

  @Test
  void aYieldInsideOnGrantedIsToldAfterTheGrant() throws Exception {
    List<String> told = new CopyOnWriteArrayList<>();
    AtomicBoolean yielded = new AtomicBoolean();
    try (LockService locks = LockProviders.connect("lock:native:local?algorithm=lease&namespace=callbacks-"
        + System.nanoTime())) {
      TumblerLeaderInitiator initiator = new TumblerLeaderInitiator(locks, new DefaultCandidate("a", "callbacks") {
        @Override
        public void onGranted(Context context) {
          told.add("onGranted");
          if (yielded.compareAndSet(false, true)) {
            context.yield();
          }
        }

        @Override
        public void onRevoked(Context context) {
          told.add("onRevoked");
        }
      });
      initiator.setLeaderEventPublisher(new LeaderEventPublisher() {
        @Override
        public void publishOnGranted(Object source, Context context, String role) {
          told.add("OnGrantedEvent");
        }

        @Override
        public void publishOnRevoked(Object source, Context context, String role) {
          told.add("OnRevokedEvent");
        }

        @Override
        public void publishOnFailedToAcquire(Object source, Context context, String role) {
          told.add("OnFailedToAcquireMutexEvent");
        }
      });
      initiator.start();
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (told.size() < 6 && System.nanoTime() < until) {
        Thread.sleep(10); // granted, yielded inside, revoked, elected again (the only candidate)
      }
      assertTrue(initiator.getContext().isLeader(), "not leader again after the yield: " + told);
      initiator.stop();
      assertEquals(List.of("onGranted", "OnGrantedEvent", "onRevoked", "OnRevokedEvent", "onGranted", "OnGrantedEvent",
          "onRevoked", "OnRevokedEvent"), told);
    }
  }
}
