package dev.tumbler.cli;

import dev.tumbler.peer.core.Leader;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.node.NodeStats;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A node's {@code /metrics}: Prometheus text exposition (format 0.0.4), every name prefixed {@code tumbler_},
 * every family with its {@code # HELP} and {@code # TYPE} lines; counters end in {@code _total}. Built from
 * {@link NodeStats}, which holds no secret. A family with nothing to show (no elected view yet, say) is left out.
 *
 * <p>To show more, add a family in {@link #render}: {@code text.family(name, type, help)} and then its samples.
 */
final class NodeMetrics {
  /** The content type of the text exposition format. */
  static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

  private NodeMetrics() {}

  /** The metrics of a node in {@code status}; {@code stats} is null before its service is open. */
  static String render(NodeStats stats, NodeStatus status) {
    Text text = new Text();
    text.family("tumbler_status", "gauge", "The node's state: 1 for the one it is in (starting, serving, stopping).");
    for (NodeStatus s : NodeStatus.values()) {
      text.sample("tumbler_status", s == status ? 1 : 0, "state", s.word());
    }
    if (stats == null) {
      return text.toString();
    }
    text.family("tumbler_node_info", "gauge", "The node's id (its listen address) and algorithm; always 1.");
    text.sample("tumbler_node_info", 1, "node", stats.nodeId(), "algorithm", stats.algorithm());
    text.counter("tumbler_messages_sent_total", "Protocol messages this node has sent to peers.",
        stats.messagesSent());
    text.counter("tumbler_messages_received_total", "Protocol messages this node has received from peers.",
        stats.messagesReceived());
    text.counter("tumbler_grants_total", "Grants (lock entries) this node's clients have received.", stats.grants());
    text.counter("tumbler_lost_total", "Grants this node's clients lost while they still held them.", stats.lost());
    text.family("tumbler_held_locks", "gauge", "Grants this node's own services hold now.");
    text.sample("tumbler_held_locks", stats.heldLocks());
    text.family("tumbler_client_sessions", "gauge", "Thin clients' sessions this member serves now.");
    text.sample("tumbler_client_sessions", stats.clientSessions());
    Map<String, Long> byType = stats.messagesSentByType();
    if (!byType.isEmpty()) {
      text.family("tumbler_messages_sent_by_type_total", "counter",
          "Protocol messages this node has sent to peers, by message type.");
      byType.forEach((type, n) -> text.sample("tumbler_messages_sent_by_type_total", n, "type", type));
    }
    Optional<Observation.View> view = stats.view();
    if (view.isPresent()) {
      Observation.View v = view.get();
      text.family("tumbler_view_term", "gauge", "The term of the elected view this node last adopted.");
      text.sample("tumbler_view_term", v.term());
      List<Leader> leaders = v.leaders();
      if (!leaders.isEmpty()) {
        text.family("tumbler_view_leader", "gauge",
            "The leaders of that view, in its order (position 0 serves single-server algorithms); always 1.");
        for (int i = 0; i < leaders.size(); i++) {
          Leader l = leaders.get(i);
          text.sample("tumbler_view_leader", 1, "node", l.nodeId(), "position", Integer.toString(i),
              "incarnation", Long.toString(l.incarnation()));
        }
      }
      boolean leader = leaders.stream().anyMatch(l -> l.nodeId().equals(stats.nodeId()));
      text.family("tumbler_leader", "gauge", "1 if this node is a leader of the view it last adopted, else 0.");
      text.sample("tumbler_leader", leader ? 1 : 0);
    }
    return text.toString();
  }

  /** The text format: families, then their samples. */
  static final class Text {
    private final StringBuilder sb = new StringBuilder();

    Text family(String name, String type, String help) {
      sb.append("# HELP ").append(name).append(' ').append(help.replace("\\", "\\\\").replace("\n", "\\n"))
          .append('\n');
      sb.append("# TYPE ").append(name).append(' ').append(type).append('\n');
      return this;
    }

    /** A family of one counter sample. */
    Text counter(String name, String help, long value) {
      return family(name, "counter", help).sample(name, value);
    }

    /** A sample; {@code labels} are name, value, name, value, … */
    Text sample(String name, long value, String... labels) {
      sb.append(name);
      if (labels.length > 0) {
        sb.append('{');
        for (int i = 0; i < labels.length; i += 2) {
          sb.append(i == 0 ? "" : ",").append(labels[i]).append("=\"").append(escape(labels[i + 1])).append('"');
        }
        sb.append('}');
      }
      sb.append(' ').append(value).append('\n');
      return this;
    }

    static String escape(String labelValue) {
      return labelValue.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    @Override
    public String toString() {
      return sb.toString();
    }
  }
}
