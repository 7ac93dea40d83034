package dev.tumbler.peer.client;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.agent.AgentCore;
import dev.tumbler.peer.composite.Channel;
import dev.tumbler.peer.sim.MutationHunt;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The rules of the client channel that a thin client's safety rests on, each broken on purpose: the simulator with
 * client nodes must catch every mutation within {@value #BUDGET} seeds.
 */
class ClientMutationSimulationTest {

  private static final int BUDGET = 2_000;

  /** D4: trusted from the reply's arrival, a grant outlives the member's window by the reply's way back. */
  @Test
  void trustFromTheReplyIsCaught() {
    caught("trust from the reply", "exclusion", ClientSimulationTest.Case.LEASE,
        new ClientSimulationTest.Tweaks(member -> { }, client -> client.mutationTrustFromReply = true));
  }

  /** D10: a thin client's told claim surrendered at once is granted to another while the client still trusts it. */
  @Test
  void surrenderAtOnceIsCaught() {
    caught("a thin client's claim surrendered at once", "exclusion", ClientSimulationTest.Case.AGENT,
        new ClientSimulationTest.Tweaks(
            member -> ((AgentCore) member.core(Channel.LOCK)).mutationSurrenderRemoteAtOnce = true, client -> { }));
  }

  private static void caught(String mutation, String rule, ClientSimulationTest.Case c,
      ClientSimulationTest.Tweaks tweaks) {
    Optional<MutationHunt.Caught> found = MutationHunt.hunt(mutation, rule,
        ClientSimulationTest.simulation(c, tweaks.member(), tweaks.client()), BUDGET,
        seed -> ClientSimulationTest.replay(c, seed) + " (with the mutation switched on)");
    assertTrue(found.isPresent(), mutation + ": no seed of " + BUDGET + " broke " + rule);
  }
}
