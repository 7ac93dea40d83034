package dev.tumbler.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.config.EnableIntegration;
import org.springframework.integration.dsl.IntegrationFlow;
import org.springframework.integration.store.MessageGroupStore;
import org.springframework.integration.store.SimpleMessageStore;
import org.springframework.integration.support.MessageBuilder;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.messaging.Message;
import org.springframework.messaging.MessageChannel;

/**
 * Spring Integration's aggregator, on two application contexts that share one message store (as two instances share
 * a database's), guarded by a {@link TumblerLockRegistry} on each: while threads of both instances add to the same
 * groups at once, no two are ever in one group's critical section (its release strategy runs under the group's lock),
 * and every group is released once, whole. On the embedded native node and on a real Redis.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AggregatorTest {
  private static final int GROUP_SIZE = 4;
  private static final int GROUPS = 150;
  static final Queue<Message<?>> RELEASED = new ConcurrentLinkedQueue<>();
  /** Per group, the threads inside its release strategy now; and the groups that ever had two. */
  static final Map<Object, AtomicInteger> INSIDE = new ConcurrentHashMap<>();
  static final Queue<Object> OVERLAPS = new ConcurrentLinkedQueue<>();

  /** An instance: a lock service, its registry, and an aggregator on the shared store. */
  @Configuration
  @EnableIntegration
  static class Instance {
    static final ThreadLocal<Object[]> ARGS = new ThreadLocal<>();
    private final String url = (String) ARGS.get()[0];
    private final MessageGroupStore store = (MessageGroupStore) ARGS.get()[1];

    @Bean(destroyMethod = "close")
    LockService lockService() {
      return LockProviders.connect(url);
    }

    @Bean
    @SuppressWarnings("rawtypes") // raw: the same source compiles on Spring Integration 6.5, where it has no parameter
    LockRegistry lockRegistry(LockService lockService) {
      return new TumblerLockRegistry(lockService);
    }

    @Bean
    @SuppressWarnings("rawtypes")
    IntegrationFlow aggregate(LockRegistry lockRegistry) {
      return IntegrationFlow.from("input")
          .aggregate(a -> a.correlationStrategy(m -> m.getHeaders().get("group"))
              .releaseStrategy(g -> {
                // runs under the group's lock: nobody else of either instance may be in here for this group
                AtomicInteger in = INSIDE.computeIfAbsent(g.getGroupId(), k -> new AtomicInteger());
                if (in.incrementAndGet() > 1) {
                  OVERLAPS.add(g.getGroupId());
                }
                try {
                  Thread.sleep(1); // widens the window a missing lock would leave open
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                } finally {
                  in.decrementAndGet();
                }
                return g.size() == GROUP_SIZE;
              })
              .messageStore(store)
              .lockRegistry(lockRegistry)
              .expireGroupsUponCompletion(true))
          .handle(RELEASED::add)
          .get();
    }
  }

  private static AnnotationConfigApplicationContext instance(String url, MessageGroupStore store) {
    return TestBackends.context(Instance.class, Instance.ARGS, new Object[] {url, store});
  }

  @Test
  void onTheEmbeddedNativeNode() throws Exception {
    everyGroupReleasedOnceAndWhole("lock:native:local");
  }

  @Test
  void onRedis() throws Exception {
    everyGroupReleasedOnceAndWhole("lock:redis://" + TestBackends.redisAddress());
  }

  /**
   * Four threads, two on each instance, send the messages of every group: message {@code i} of group {@code g} from
   * thread {@code (g + i) % 4}, the four meeting before each group, so that each group's messages arrive on both
   * instances at once.
   */
  private void everyGroupReleasedOnceAndWhole(String url) throws Exception {
    RELEASED.clear();
    INSIDE.clear();
    OVERLAPS.clear();
    SimpleMessageStore shared = new SimpleMessageStore();
    try (AnnotationConfigApplicationContext a = instance(url, shared);
        AnnotationConfigApplicationContext b = instance(url, shared)) {
      List<MessageChannel> inputs = List.of(a.getBean("input", MessageChannel.class), b.getBean("input",
          MessageChannel.class), a.getBean("input", MessageChannel.class), b.getBean("input", MessageChannel.class));
      ExecutorService senders = Executors.newFixedThreadPool(inputs.size());
      // every group's messages sent at once: the four threads meet before each group
      CyclicBarrier together = new CyclicBarrier(inputs.size());
      List<Future<?>> sent = new ArrayList<>();
      for (int t = 0; t < inputs.size(); t++) {
        int thread = t;
        sent.add(senders.submit(() -> {
          for (int g = 0; g < GROUPS; g++) {
            together.await(30, TimeUnit.SECONDS);
            for (int i = 0; i < GROUP_SIZE; i++) {
              if ((g + i) % inputs.size() == thread) {
                inputs.get(thread).send(MessageBuilder.withPayload(g * 100 + i).setHeader("group", "g" + g).build());
              }
            }
          }
          return null;
        }));
      }
      for (Future<?> f : sent) {
        f.get(60, TimeUnit.SECONDS);
      }
      senders.shutdown();
    }
    Map<Object, List<Collection<?>>> byGroup = new TreeMap<>();
    for (Message<?> m : RELEASED) {
      byGroup.computeIfAbsent(m.getHeaders().get("group"), k -> new ArrayList<>()).add((Collection<?>) m.getPayload());
    }
    List<String> wrong = new ArrayList<>();
    for (int g = 0; g < GROUPS; g++) {
      List<Collection<?>> releases = byGroup.getOrDefault("g" + g, List.of());
      List<Integer> expected = new ArrayList<>();
      for (int i = 0; i < GROUP_SIZE; i++) {
        expected.add(g * 100 + i);
      }
      if (releases.size() != 1 || !new TreeSet<>(releases.getFirst()).equals(new TreeSet<>(expected))
          || releases.getFirst().size() != GROUP_SIZE) {
        wrong.add("g" + g + " released " + releases);
      }
    }
    assertTrue(OVERLAPS.isEmpty(), "two threads in one group's critical section at once: " + OVERLAPS.size()
        + " times, groups " + new TreeSet<>(OVERLAPS.stream().map(String::valueOf).toList()));
    assertTrue(wrong.isEmpty(), wrong.size() + " of " + GROUPS + " groups not released once and whole: "
        + wrong.subList(0, Math.min(10, wrong.size())));
    assertEquals(GROUPS, RELEASED.size());
  }
}
