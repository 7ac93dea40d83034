package dev.tumbler.peer.core;

/**
 * Sessions of thin clients (CLIENTS.md D10): a member's gateway names the core session of each client session with
 * {@link #PREFIX}, which no local session has (a local one starts with its node's id). A core must not take a grant
 * of such a session away from it on its own (to break a deadlock, say) before the window it told the client has
 * closed: the client hears of the loss over the network, and until then it trusts the grant. Stateless.
 */
public final class RemoteSessions {

  /** The start of every thin client's core session: {@code "client "}, with a space no node id has. */
  public static final String PREFIX = "client ";

  private RemoteSessions() {}

  /** Whether {@code session} is a thin client's. */
  public static boolean remote(String session) {
    return session != null && session.startsWith(PREFIX);
  }
}
