package dev.tumbler.peer.election;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.peer.algorithm.Algorithm;
import dev.tumbler.peer.algorithm.AlgorithmSettings;
import dev.tumbler.peer.algorithm.CoreContext;
import dev.tumbler.peer.core.MessageCodec;
import dev.tumbler.peer.core.PeerMessage;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The descriptor of an algorithm whose leaders the election chooses ({@code bakery}, {@code lease}, {@code buckets}):
 * what they share, so that each names only its core, its settings and its cost. Every such algorithm is leased (its
 * grants end with the lease term), elected, and answers who holds a name. Immutable and thread safe.
 *
 * @param <M> the algorithm's messages
 * @param <S> its URL settings
 */
public abstract class ElectedAlgorithm<M extends PeerMessage, S extends ElectedSettings> implements Algorithm<M> {

  /** The most members a cluster may have: a practical bound (heartbeats and restatements), the same for all. */
  public static final int MAX_NODES = 1024;

  private final String name;
  private final String summary;
  private final Set<Capability> capabilities;
  private final MessageCodec<M> codec;
  private final int leaderCount;
  private final String maxNodesReason;
  private final Class<S> settingsType;
  private final List<String> parameters;
  private final Function<LockUrl, S> parse;
  private final Supplier<S> defaults;

  /**
   * @param name the URL's {@code algorithm} value
   * @param summary one line for {@code tumbler algorithms}
   * @param capabilities what it supports
   * @param codec its messages on the wire
   * @param leaderCount how many leaders the election chooses
   * @param maxNodesReason why {@link #MAX_NODES} bounds a cluster
   * @param settingsType its settings' class
   * @param parameters its URL parameters
   * @param parse its settings from a URL
   * @param defaults the simulator's settings
   */
  protected ElectedAlgorithm(String name, String summary, Set<Capability> capabilities, MessageCodec<M> codec,
      int leaderCount, String maxNodesReason, Class<S> settingsType, List<String> parameters,
      Function<LockUrl, S> parse, Supplier<S> defaults) {
    this.name = Objects.requireNonNull(name, "name");
    this.summary = Objects.requireNonNull(summary, "summary");
    this.capabilities = Set.copyOf(EnumSet.copyOf(capabilities));
    this.codec = Objects.requireNonNull(codec, "codec");
    this.leaderCount = leaderCount;
    this.maxNodesReason = Objects.requireNonNull(maxNodesReason, "maxNodesReason");
    this.settingsType = Objects.requireNonNull(settingsType, "settingsType");
    this.parameters = List.copyOf(parameters);
    this.parse = Objects.requireNonNull(parse, "parse");
    this.defaults = Objects.requireNonNull(defaults, "defaults");
  }

  @Override
  public final String name() {
    return name;
  }

  @Override
  public final String summary() {
    return summary;
  }

  @Override
  public final Set<Capability> capabilities() {
    return capabilities;
  }

  @Override
  public final int maxNodes() {
    return MAX_NODES;
  }

  @Override
  public final String maxNodesReason() {
    return maxNodesReason;
  }

  @Override
  public final MessageCodec<M> codec() {
    return codec;
  }

  @Override
  public final boolean leased() {
    return true;
  }

  @Override
  public final boolean elected() {
    return true;
  }

  /** {@inheritDoc} So are those whose view has one leader ({@code lease}, {@code buckets}): it is their server. */
  @Override
  public final boolean singleServer() {
    return leaderCount == 1;
  }

  /** {@inheritDoc} A leader (the server, or the owner of the name) answers with the tag of what holds the name. */
  @Override
  public final boolean answersHolderQueries() {
    return true;
  }

  @Override
  public final Set<String> parameters() {
    return new LinkedHashSet<>(parameters);
  }

  @Override
  public final AlgorithmSettings settings(LockUrl url) {
    return parse.apply(url);
  }

  @Override
  public final AlgorithmSettings defaults() {
    return defaults.get();
  }

  @Override
  public final ElectionSettings election(CoreContext context) {
    return settings(context.settings()).election().settings(leaderCount, context);
  }

  /**
   * The settings as this algorithm's own.
   *
   * @throws IllegalArgumentException if they are another algorithm's
   */
  protected final S settings(AlgorithmSettings settings) {
    if (settingsType.isInstance(settings)) {
      return settingsType.cast(settings);
    }
    throw new IllegalArgumentException(
        name + " needs " + settingsType.getSimpleName() + ", not " + settings);
  }

  @Override
  public final String toString() {
    return name;
  }
}
