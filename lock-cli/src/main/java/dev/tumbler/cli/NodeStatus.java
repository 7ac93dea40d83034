package dev.tumbler.cli;

import java.util.Locale;

/** Where a {@code tumbler node} is in its life; {@code /health} answers 200 only while it {@link #SERVING serves}. */
enum NodeStatus {
  /** Its endpoint is up, its service not yet. */
  STARTING,
  /** Its service is open and it takes part in the cluster. */
  SERVING,
  /** It was told to stop (SIGTERM, Ctrl-C) and is closing. */
  STOPPING;

  /** The word {@code /health} and the metrics use: {@code starting}, {@code serving}, {@code stopping}. */
  String word() {
    return name().toLowerCase(Locale.ROOT);
  }
}
