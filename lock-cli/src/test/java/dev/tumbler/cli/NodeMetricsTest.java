package dev.tumbler.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tumbler.peer.core.Leader;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.node.NodeStats;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class NodeMetricsTest {
  /** Fixed counters, as a node of the lease algorithm that leads its view. */
  record FixedStats(String nodeId, String algorithm, long messagesSent, long messagesReceived, long grants, long lost,
      Optional<Observation.View> view, Map<String, Long> messagesSentByType, int heldLocks, int clientSessions)
      implements NodeStats {
    @Override
    public Optional<String> home() {
      return Optional.empty();
    }
  }

  private static final FixedStats LEADER = new FixedStats("127.0.0.1:7701", "lease", 42, 40, 7, 1,
      Optional.of(new Observation.View(3, List.of(new Leader("127.0.0.1:7701", 2)), 123L)),
      new TreeMap<>(Map.of("Grant", 7L, "Heartbeat", 35L)), 2, 5);

  @Test
  void aServingNodeShowsItsCountersItsViewAndItsMessagesByType() {
    assertEquals("""
        # HELP tumbler_status The node's state: 1 for the one it is in (starting, serving, stopping).
        # TYPE tumbler_status gauge
        tumbler_status{state="starting"} 0
        tumbler_status{state="serving"} 1
        tumbler_status{state="stopping"} 0
        # HELP tumbler_node_info The node's id (its listen address) and algorithm; always 1.
        # TYPE tumbler_node_info gauge
        tumbler_node_info{node="127.0.0.1:7701",algorithm="lease"} 1
        # HELP tumbler_messages_sent_total Protocol messages this node has sent to peers.
        # TYPE tumbler_messages_sent_total counter
        tumbler_messages_sent_total 42
        # HELP tumbler_messages_received_total Protocol messages this node has received from peers.
        # TYPE tumbler_messages_received_total counter
        tumbler_messages_received_total 40
        # HELP tumbler_grants_total Grants (lock entries) this node's clients have received.
        # TYPE tumbler_grants_total counter
        tumbler_grants_total 7
        # HELP tumbler_lost_total Grants this node's clients lost while they still held them.
        # TYPE tumbler_lost_total counter
        tumbler_lost_total 1
        # HELP tumbler_held_locks Grants this node's own services hold now.
        # TYPE tumbler_held_locks gauge
        tumbler_held_locks 2
        # HELP tumbler_client_sessions Thin clients' sessions this member serves now.
        # TYPE tumbler_client_sessions gauge
        tumbler_client_sessions 5
        # HELP tumbler_messages_sent_by_type_total Protocol messages this node has sent to peers, by message type.
        # TYPE tumbler_messages_sent_by_type_total counter
        tumbler_messages_sent_by_type_total{type="Grant"} 7
        tumbler_messages_sent_by_type_total{type="Heartbeat"} 35
        # HELP tumbler_view_term The term of the elected view this node last adopted.
        # TYPE tumbler_view_term gauge
        tumbler_view_term 3
        # HELP tumbler_view_leader The leaders of that view, in its order (position 0 serves single-server \
        algorithms); always 1.
        # TYPE tumbler_view_leader gauge
        tumbler_view_leader{node="127.0.0.1:7701",position="0",incarnation="2"} 1
        # HELP tumbler_leader 1 if this node is a leader of the view it last adopted, else 0.
        # TYPE tumbler_leader gauge
        tumbler_leader 1
        """, NodeMetrics.render(LEADER, NodeStatus.SERVING));
  }

  @Test
  void withoutAViewOrMessagesThoseFamiliesAreLeftOut() {
    FixedStats lamport = new FixedStats("n1", "lamport", 0, 0, 0, 0, Optional.empty(), Map.of(), 0, 0);
    String text = NodeMetrics.render(lamport, NodeStatus.STOPPING);
    assertEquals(List.of("tumbler_status{state=\"starting\"} 0", "tumbler_status{state=\"serving\"} 0",
        "tumbler_status{state=\"stopping\"} 1", "tumbler_node_info{node=\"n1\",algorithm=\"lamport\"} 1",
        "tumbler_messages_sent_total 0", "tumbler_messages_received_total 0", "tumbler_grants_total 0",
        "tumbler_lost_total 0", "tumbler_held_locks 0", "tumbler_client_sessions 0"), text.lines().filter(l -> !l.startsWith("#")).toList());
  }

  @Test
  void beforeTheServiceIsOpenOnlyTheStatusIsShown() {
    assertEquals("""
        # HELP tumbler_status The node's state: 1 for the one it is in (starting, serving, stopping).
        # TYPE tumbler_status gauge
        tumbler_status{state="starting"} 1
        tumbler_status{state="serving"} 0
        tumbler_status{state="stopping"} 0
        """, NodeMetrics.render(null, NodeStatus.STARTING));
  }

  @Test
  void aFollowerIsNotALeaderAndLabelValuesAreEscaped() {
    FixedStats follower = new FixedStats("node \"b\"\\2", "lease", 1, 1, 0, 0,
        Optional.of(new Observation.View(5, List.of(new Leader("127.0.0.1:7701", 0)), Long.MIN_VALUE)), Map.of(), 0,
        0);
    String text = NodeMetrics.render(follower, NodeStatus.SERVING);
    List<String> samples = text.lines().filter(l -> !l.startsWith("#")).toList();
    assertEquals("tumbler_node_info{node=\"node \\\"b\\\"\\\\2\",algorithm=\"lease\"} 1", samples.get(3));
    assertEquals("tumbler_leader 0", samples.getLast());
  }
}
