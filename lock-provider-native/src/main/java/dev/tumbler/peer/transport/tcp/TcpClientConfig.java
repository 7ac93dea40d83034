package dev.tumbler.peer.transport.tcp;

import static dev.tumbler.peer.transport.tcp.TcpLinkSettings.MIN_SECRET_BYTES;
import static dev.tumbler.peer.transport.tcp.TcpLinkSettings.invalid;

import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.spi.LockUrl;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;

/**
 * Settings of one {@link TcpClientTransport}: the members' client addresses and the clients' secret. How its
 * connections run (TLS, the frame cap, timeouts, backoff) is its {@link #link()}, the settings a member's
 * {@link TcpTransportConfig} has too, with the same parameters and defaults; a client has no listen address, no
 * peer secret and no peers.
 *
 * <p>A member's client address is {@code host:port} as the client dials it (IPv6 literals in brackets); it
 * is the member's id on the client ({@link TcpClientTransport#peers()}), and with TLS the member's
 * certificate is checked against its host. Give the client its members' {@code idleTimeout} and
 * {@code maxFrameSize} (see {@link TcpLinkSettings}).
 *
 * <p>Immutable and thread safe (the secret is copied in and out; never in {@link #toString()}).
 */
public final class TcpClientConfig {

  /** The URL parameters {@link #fromUrl} reads; the caller adds its own and rejects any other. */
  public static final Set<String> PARAMETERS = TcpLinkSettings.parametersAnd("clientSecret");

  private final List<String> members;
  private final byte[] clientSecret;
  private final TcpLinkSettings link;

  private TcpClientConfig(Builder b) {
    this.members = List.copyOf(b.members);
    this.clientSecret = b.clientSecret.clone();
    this.link = b.link();
  }

  /**
   * A builder for a client of the members whose client listeners are at {@code members} ({@code host:port}
   * each, in the order the client prefers them).
   *
   * @throws IllegalArgumentException if {@code members} is empty, or an address is malformed or listed twice
   */
  public static Builder builder(List<String> members) {
    return new Builder(members);
  }

  /**
   * Builds the settings from a {@code lock:native://h1:7781,h2:7781?clientSecret=...} URL: its hosts are the
   * members' client addresses, in order. String entries of {@code info} override URL parameters; {@code info}
   * may also carry the client secret as a {@code byte[]} under {@code clientSecret}.
   *
   * <p>Parameters: {@code clientSecret} (required, at least {@value TcpLinkSettings#MIN_SECRET_BYTES} bytes) and
   * the links' parameters with the members' defaults (see {@link TcpLinkSettings.Builder#fromUrl}; a key store is
   * optional: members do not ask a client for a certificate). Whether the URL is a client's at all (rather than a
   * member's) is the caller's to decide; other parameters are left to it, to check against {@link #PARAMETERS}
   * plus its own.
   *
   * @throws InvalidLockUrlException naming the parameter that is missing or invalid; never quoting a
   *     secret or password
   */
  public static TcpClientConfig fromUrl(LockUrl url, Properties info) {
    Objects.requireNonNull(url, "url");
    Properties props = info == null ? new Properties() : info;
    LockUrl u = url.withOverrides(props);
    if (!u.isHierarchical() || u.hosts().isEmpty()) {
      throw new InvalidLockUrlException("lock URL " + u + ": a TCP client URL names the members' client "
          + "addresses, as in lock:native://127.0.0.1:7781,127.0.0.1:7782?clientSecret=...");
    }
    List<String> addresses = new ArrayList<>();
    for (LockUrl.HostAndPort h : u.hosts()) {
      if (!h.hasPort()) {
        throw new InvalidLockUrlException("lock URL " + u + ": member address '" + h + "' has no port");
      }
      addresses.add(h.toString());
    }
    Builder b;
    try {
      b = builder(addresses);
    } catch (IllegalArgumentException e) {
      throw new InvalidLockUrlException("lock URL " + u + ": " + e.getMessage(), e);
    }
    if (!TcpLinkSettings.secretFromUrl(u, props, "clientSecret", b::clientSecret)) {
      throw invalid(u, "clientSecret", "the clients' secret is required to connect to the members (at least "
          + MIN_SECRET_BYTES + " bytes; pass it in Properties rather than in the URL where you can)");
    }
    b.fromUrl(u, props, false);
    return b.build();
  }

  /** The members' client addresses, in the order given; they are the members' ids on the client. */
  public List<String> members() {
    return members;
  }

  /** A copy of the clients' secret. */
  public byte[] clientSecret() {
    return clientSecret.clone();
  }

  /** How the connections run: TLS, the frame cap, timeouts, backoff. */
  public TcpLinkSettings link() {
    return link;
  }

  /** Without the secret. */
  @Override
  public String toString() {
    return "TcpClientConfig[members=" + members + ", clientSecret=***, " + link.describe() + "]";
  }

  /** Builds a {@link TcpClientConfig}; every setter checks its value. Not thread safe. */
  public static final class Builder extends TcpLinkSettings.Builder<Builder> {
    private final Set<String> members = new LinkedHashSet<>();
    private byte[] clientSecret;

    private Builder(List<String> addresses) {
      Objects.requireNonNull(addresses, "members");
      for (String a : addresses) {
        String n = Sockets.normalizeId(Objects.requireNonNull(a, "member address"), "members", false);
        if (!members.add(n)) {
          throw new IllegalArgumentException("members: '" + n + "' is listed twice");
        }
      }
      if (members.isEmpty()) {
        throw new IllegalArgumentException("members: at least one member's client address is required");
      }
    }

    @Override
    Builder thisBuilder() {
      return this;
    }

    /**
     * The clients' secret (copied): the members' {@code clientSecret}.
     *
     * @throws IllegalArgumentException if shorter than {@value TcpLinkSettings#MIN_SECRET_BYTES} bytes
     */
    public Builder clientSecret(byte[] clientSecret) {
      this.clientSecret = TcpLinkSettings.checkSecret(clientSecret, "clientSecret");
      return this;
    }

    /**
     * @throws IllegalStateException if no client secret was set
     */
    public TcpClientConfig build() {
      if (clientSecret == null) {
        throw new IllegalStateException("clientSecret: the clients' secret is required");
      }
      return new TcpClientConfig(this);
    }
  }
}
