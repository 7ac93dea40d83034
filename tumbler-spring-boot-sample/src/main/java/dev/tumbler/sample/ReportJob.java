package dev.tumbler.sample;

import dev.tumbler.lock.spring.Locked;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * A job that every instance schedules and only one runs at a time: while an instance holds the lock
 * {@code sample-report}, the others' ticks are skipped. Each run is kept as an interval on this JVM's monotonic
 * clock, so a test can check that no two runs of different instances overlapped.
 */
@Component
public class ReportJob {
  private static final Log LOG = LogFactory.getLog(ReportJob.class);

  /** One run: when it started and ended ({@link System#nanoTime()}). */
  public record Run(long startNanos, long endNanos) {}

  private final Duration work;
  private final List<Run> runs = new ArrayList<>();

  /** @param work how long a report usually takes (each run takes from half to one and a half times that) */
  public ReportJob(@Value("${sample.report.work:200ms}") Duration work) {
    this.work = work;
  }

  // a delay after each run (rather than a fixed rate) lets the instances' ticks drift against each other
  @Scheduled(fixedDelayString = "${sample.report.delay:5s}")
  @Locked(name = "sample-report")
  public void report() throws InterruptedException {
    long start = System.nanoTime();
    LOG.info("writing the report");
    // the report's work, which takes half to one and a half times the usual
    long millis = work.toMillis();
    Thread.sleep(millis / 2 + ThreadLocalRandom.current().nextLong(millis + 1));
    synchronized (runs) {
      runs.add(new Run(start, System.nanoTime()));
    }
  }

  /** The runs of this instance so far. */
  public List<Run> runs() {
    synchronized (runs) {
      return List.copyOf(runs);
    }
  }
}
