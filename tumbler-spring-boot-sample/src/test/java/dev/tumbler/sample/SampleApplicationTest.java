package dev.tumbler.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.RestClient;
import redis.embedded.RedisServer;

/**
 * Two instances of the sample, each on a random port, on one lock: the embedded native node (both in this
 * JVM) and a real Redis server. The report job, whose tick comes while the other instance works, runs on one instance at a time,
 * and the actuator shows the lock meters and the lock service's health.
 */
class SampleApplicationTest {

  @Test
  void twoInstancesOnTheEmbeddedNode() {
    twoInstances("lock:native:local", "native");
  }

  @Test
  void twoInstancesOnRedis() {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    RedisServer redis = RedisServer.builder().port(port).bind("127.0.0.1").setting("save \"\"")
        .setting("appendonly no").build();
    redis.start();
    try {
      twoInstances("lock:redis://127.0.0.1:" + port, "redis");
    } finally {
      redis.stop();
    }
  }

  private static ConfigurableApplicationContext start(String url) {
    // as command-line arguments: they win over application.properties (builder properties would not)
    return new SpringApplicationBuilder(SampleApplication.class)
        .run("--server.port=0", "--tumbler.url=" + url, "--sample.report.delay=100ms", "--sample.report.work=100ms",
            "--spring.main.banner-mode=off", "--logging.level.root=warn");
  }

  private static void twoInstances(String url, String provider) {
    try (ConfigurableApplicationContext a = start(url); ConfigurableApplicationContext b = start(url)) {
      RestClient httpA = client(a);
      RestClient httpB = client(b);
      // each tick of one instance while the other works is skipped: runs, then skips, on both
      await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100))
          .alias("runs on each instance and skipped ticks")
          .untilAsserted(() -> {
            assertThat(runs(a)).as("runs of the first instance").hasSizeGreaterThanOrEqualTo(2);
            assertThat(runs(b)).as("runs of the second instance").hasSizeGreaterThanOrEqualTo(2);
            assertThat(count(httpA, "tumbler.lock.acquire", "outcome:timeout")
                + count(httpB, "tumbler.lock.acquire", "outcome:timeout")).as("skipped ticks").isGreaterThanOrEqualTo(2);
          });

      List<ReportJob.Run> all = new ArrayList<>(runs(a));
      all.addAll(runs(b));
      all.sort(Comparator.comparingLong(ReportJob.Run::startNanos));
      for (int i = 1; i < all.size(); i++) {
        assertThat(all.get(i).startNanos()).as("run %d starts after run %d ended", i, i - 1)
            .isGreaterThanOrEqualTo(all.get(i - 1).endNanos());
      }

      // the meters, as the actuator shows them
      assertThat(count(httpA, "tumbler.lock.acquire", "outcome:acquired")).isGreaterThanOrEqualTo(2);
      assertThat(count(httpA, "tumbler.lock.held", "provider:" + provider)).isGreaterThanOrEqualTo(2);
      // the meter's tags as an instance with skipped ticks shows them: the skipped ticks may all fall on one instance
      // (a suite run saw the second one with none, so its meter had no outcome "timeout" to show)
      RestClient skipped = count(httpB, "tumbler.lock.acquire", "outcome:timeout") > 0 ? httpB : httpA;
      Map<?, ?> acquire = skipped.get().uri("/actuator/metrics/tumbler.lock.acquire").retrieve().body(Map.class);
      assertThat(acquire.toString()).contains("outcome").contains("acquired").contains("timeout")
          .contains("kind").contains("provider");

      Map<?, ?> health = httpA.get().uri("/actuator/health").retrieve().body(Map.class);
      Map<?, ?> tumbler = (Map<?, ?>) ((Map<?, ?>) health.get("components")).get("tumbler");
      assertThat(tumbler.get("status")).isEqualTo("UP");
      assertThat(((Map<?, ?>) tumbler.get("details")).get("provider")).isEqualTo(provider);
    }
  }

  private static RestClient client(ConfigurableApplicationContext ctx) {
    return RestClient.create("http://127.0.0.1:" + ctx.getEnvironment().getProperty("local.server.port"));
  }

  private static List<ReportJob.Run> runs(ConfigurableApplicationContext ctx) {
    return ctx.getBean(ReportJob.class).runs();
  }

  /** The COUNT of a meter (summed over its series) with the tag, as {@code /actuator/metrics} gives it; 0 if none. */
  private static double count(RestClient http, String meter, String tag) {
    try {
      Map<?, ?> body = http.get().uri("/actuator/metrics/{meter}?tag={tag}", meter, tag).retrieve().body(Map.class);
      for (Object m : (List<?>) body.get("measurements")) {
        Map<?, ?> measurement = (Map<?, ?>) m;
        if ("COUNT".equals(measurement.get("statistic"))) {
          return ((Number) measurement.get("value")).doubleValue();
        }
      }
      return 0;
    } catch (HttpClientErrorException.NotFound e) {
      return 0;
    }
  }
}
