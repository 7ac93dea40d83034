package dev.tumbler.peer.client;

import dev.tumbler.lock.TransactionOptions.Quorum;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.CodecException;
import dev.tumbler.peer.core.MessageCodec;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.TxOptions;
import dev.tumbler.peer.core.Wire;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Binary encoding of {@link ClientMessage}: {@code version(1) type(1) session(8) seq-or-echo(8) fields}, big-endian;
 * strings are modified UTF-8 with a 2-byte length. Decoding checks the version, the type, every id, duration, enum,
 * name and count (a corrupt count is refused, never allocated), that a claim and a transaction's options are valid,
 * and that nothing trails. Thread safe.
 */
public final class ClientCodec implements MessageCodec<ClientMessage> {

  /** The encoding version this codec writes and reads. */
  public static final byte VERSION = 1;

  /** The longest path element of a claim (a provider's qualified name is at most 517 characters), and node id. */
  static final int MAX_ELEMENT_LENGTH = 520;
  /** The longest name: a claim's path joined by {@code /}. */
  static final int MAX_NAME_LENGTH = Claim.MAX_DEPTH * (MAX_ELEMENT_LENGTH + 1);
  /** The longest algorithm name, reason or detail. */
  static final int MAX_TEXT_LENGTH = 2048;

  static final byte HELLO = 1;
  static final byte ACQUIRE = 2;
  static final byte RELEASE = 3;
  static final byte CANCEL = 4;
  static final byte RENEW = 5;
  static final byte BEGIN = 6;
  static final byte END = 7;
  static final byte HOLDER_QUERY = 8;
  static final byte PERMITS_QUERY = 9;
  static final byte PING = 10;
  static final byte BYE = 11;
  static final byte WELCOME = 20;
  static final byte REFUSED = 21;
  static final byte GONE = 22;
  static final byte GRANTED = 23;
  static final byte RENEWED = 24;
  static final byte FAILED = 25;
  static final byte LOST = 26;
  static final byte TX_ABORTED = 27;
  static final byte HOLDER = 28;
  static final byte PERMITS = 29;
  static final byte PONG = 30;
  static final byte AGAIN = 31;

  private static final String CODEC = "client";
  private static final int MIN_TEXT_BYTES = 3;
  /** A claim: a 1-element path, mode, permits, limit, writer, quiet period, empty tag. */
  private static final int MIN_CLAIM_BYTES = 4 + MIN_TEXT_BYTES + 1 + 4 + 4 + 1 + 8 + 2;
  private static final int MIN_ASKED_BYTES = 8 + MIN_CLAIM_BYTES + 1 + 8 + 1;
  private static final int MIN_OPEN_BYTES = 8 + 1 + 1 + 4 + 8;

  @Override
  public byte[] encode(ClientMessage message) {
    return encode(message, 0);
  }

  @Override
  public byte[] encode(ClientMessage message, int headroom) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(headroom + 64);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.write(new byte[headroom]);
      out.writeByte(VERSION);
      out.writeByte(type(message));
      out.writeLong(message.session());
      switch (message) {
        case ClientMessage.ToMember m -> {
          out.writeLong(m.seq());
          writeToMember(out, m);
        }
        case ClientMessage.ToClient m -> {
          out.writeLong(m.echo());
          writeToClient(out, m);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  private static void writeToMember(DataOutputStream out, ClientMessage.ToMember message) throws IOException {
    switch (message) {
      case ClientMessage.Hello m -> {
        out.writeUTF(m.algorithm());
        out.writeLong(m.leaseNanos());
        out.writeInt(m.requests().size());
        for (ClientMessage.Asked a : m.requests()) {
          out.writeLong(a.req());
          writeClaim(out, a.claim());
          out.writeBoolean(a.attempt());
          out.writeLong(a.tx());
          out.writeBoolean(a.held());
        }
        out.writeInt(m.txs().size());
        for (ClientMessage.Open o : m.txs()) {
          out.writeLong(o.tx());
          writeOptions(out, o.options());
        }
      }
      case ClientMessage.Acquire m -> {
        out.writeLong(m.req());
        writeClaim(out, m.claim());
        out.writeBoolean(m.attempt());
        out.writeLong(m.tx());
      }
      case ClientMessage.Release m -> out.writeLong(m.req());
      case ClientMessage.Cancel m -> out.writeLong(m.req());
      case ClientMessage.Renew m -> out.writeLong(m.req());
      case ClientMessage.Begin m -> {
        out.writeLong(m.tx());
        writeOptions(out, m.options());
      }
      case ClientMessage.End m -> out.writeLong(m.tx());
      case ClientMessage.HolderQuery m -> {
        out.writeLong(m.q());
        out.writeUTF(m.name());
      }
      case ClientMessage.PermitsQuery m -> {
        out.writeLong(m.q());
        out.writeUTF(m.name());
        out.writeInt(m.limit());
      }
      case ClientMessage.Ping m -> { }
      case ClientMessage.Bye m -> { }
    }
  }

  private static void writeToClient(DataOutputStream out, ClientMessage.ToClient message) throws IOException {
    switch (message) {
      case ClientMessage.Welcome m -> out.writeLong(m.sessionFor());
      case ClientMessage.Refused m -> out.writeUTF(m.reason());
      case ClientMessage.Gone m -> {
        out.writeBoolean(m.stopping());
        out.writeUTF(m.reason());
      }
      case ClientMessage.Granted m -> {
        out.writeLong(m.sessionFor());
        out.writeLong(m.req());
        out.writeUTF(m.name());
        out.writeLong(m.token());
        out.writeInt(m.permits());
        out.writeLong(m.validFor());
      }
      case ClientMessage.Renewed m -> {
        out.writeLong(m.sessionFor());
        out.writeLong(m.req());
        out.writeLong(m.validFor());
      }
      case ClientMessage.Failed m -> {
        out.writeLong(m.sessionFor());
        out.writeLong(m.req());
        out.writeUTF(m.name());
        out.writeByte(m.failure().ordinal());
        writeNodes(out, m.missing());
        out.writeUTF(m.detail());
      }
      case ClientMessage.Lost m -> {
        out.writeLong(m.sessionFor());
        out.writeLong(m.req());
        out.writeUTF(m.name());
        out.writeByte(m.reason().ordinal());
        out.writeUTF(m.detail());
      }
      case ClientMessage.TxAborted m -> {
        out.writeLong(m.sessionFor());
        out.writeLong(m.tx());
        out.writeByte(m.failure().ordinal());
        writeNodes(out, m.missing());
        out.writeUTF(m.detail());
      }
      case ClientMessage.Holder m -> {
        out.writeLong(m.sessionFor());
        out.writeLong(m.q());
        out.writeUTF(m.name());
        out.writeUTF(m.tag());
      }
      case ClientMessage.Permits m -> {
        out.writeLong(m.sessionFor());
        out.writeLong(m.q());
        out.writeUTF(m.name());
        out.writeInt(m.available());
      }
      case ClientMessage.Pong m -> out.writeLong(m.sessionFor());
      case ClientMessage.Again m -> out.writeLong(m.sessionFor());
    }
  }

  private static void writeClaim(DataOutputStream out, Claim c) throws IOException {
    out.writeInt(c.path().size());
    for (String e : c.path()) {
      out.writeUTF(e);
    }
    out.writeByte(c.mode().ordinal());
    out.writeInt(c.permits());
    out.writeInt(c.limit());
    out.writeByte(c.writer().ordinal());
    out.writeLong(c.quietNanos());
    out.writeUTF(c.tag());
  }

  private static void writeOptions(DataOutputStream out, TxOptions o) throws IOException {
    out.writeBoolean(o.abortOnDeadlock());
    out.writeByte(o.quorum().ordinal());
    writeNodes(out, o.nodes());
    out.writeLong(o.leaseNanos());
  }

  private static void writeNodes(DataOutputStream out, java.util.Collection<String> nodes) throws IOException {
    out.writeInt(nodes.size());
    for (String n : nodes) {
      out.writeUTF(n);
    }
  }

  private static byte type(ClientMessage m) {
    return switch (m) {
      case ClientMessage.Hello x -> HELLO;
      case ClientMessage.Acquire x -> ACQUIRE;
      case ClientMessage.Release x -> RELEASE;
      case ClientMessage.Cancel x -> CANCEL;
      case ClientMessage.Renew x -> RENEW;
      case ClientMessage.Begin x -> BEGIN;
      case ClientMessage.End x -> END;
      case ClientMessage.HolderQuery x -> HOLDER_QUERY;
      case ClientMessage.PermitsQuery x -> PERMITS_QUERY;
      case ClientMessage.Ping x -> PING;
      case ClientMessage.Bye x -> BYE;
      case ClientMessage.Welcome x -> WELCOME;
      case ClientMessage.Refused x -> REFUSED;
      case ClientMessage.Gone x -> GONE;
      case ClientMessage.Granted x -> GRANTED;
      case ClientMessage.Renewed x -> RENEWED;
      case ClientMessage.Failed x -> FAILED;
      case ClientMessage.Lost x -> LOST;
      case ClientMessage.TxAborted x -> TX_ABORTED;
      case ClientMessage.Holder x -> HOLDER;
      case ClientMessage.Permits x -> PERMITS;
      case ClientMessage.Pong x -> PONG;
      case ClientMessage.Again x -> AGAIN;
    };
  }

  @Override
  public ClientMessage decode(byte[] bytes) {
    return decode(bytes, 0);
  }

  @Override
  public ClientMessage decode(byte[] bytes, int offset) {
    if (bytes == null || offset < 0 || bytes.length - offset < 18) {
      throw new CodecException("client message too short: " + (bytes == null ? "null"
          : Math.max(0, bytes.length - offset) + " bytes"));
    }
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes, offset, bytes.length - offset));
    try {
      byte version = in.readByte();
      if (version != VERSION) {
        throw new CodecException("client message version " + version + " is not supported (expected " + VERSION
            + ")");
      }
      byte type = in.readByte();
      long s = in.readLong();
      long n = id(in, type < WELCOME ? "sequence number" : "echo");
      ClientMessage m;
      try {
        m = switch (type) {
          case HELLO -> hello(in, s, n);
          case ACQUIRE -> new ClientMessage.Acquire(s, n, id(in, "request id"), claim(in), in.readBoolean(),
              id(in, "transaction id"));
          case RELEASE -> new ClientMessage.Release(s, n, id(in, "request id"));
          case CANCEL -> new ClientMessage.Cancel(s, n, id(in, "request id"));
          case RENEW -> new ClientMessage.Renew(s, n, id(in, "request id"));
          case BEGIN -> new ClientMessage.Begin(s, n, id(in, "transaction id"), options(in));
          case END -> new ClientMessage.End(s, n, id(in, "transaction id"));
          case HOLDER_QUERY -> new ClientMessage.HolderQuery(s, n, id(in, "query id"), name(in));
          case PERMITS_QUERY -> new ClientMessage.PermitsQuery(s, n, id(in, "query id"), name(in),
              Wire.positive(in, Integer.MAX_VALUE, CODEC, "limit"));
          case PING -> new ClientMessage.Ping(s, n);
          case BYE -> new ClientMessage.Bye(s, n);
          case WELCOME -> new ClientMessage.Welcome(s, n, duration(in, "session time"));
          case REFUSED -> new ClientMessage.Refused(s, n, text(in, "reason"));
          case GONE -> new ClientMessage.Gone(s, n, in.readBoolean(), text(in, "reason"));
          case GRANTED -> new ClientMessage.Granted(s, n, duration(in, "session time"), id(in, "request id"),
              name(in), in.readLong(), Wire.positive(in, Integer.MAX_VALUE, CODEC, "permits"),
              duration(in, "grant's time"));
          case RENEWED -> new ClientMessage.Renewed(s, n, duration(in, "session time"), id(in, "request id"),
              duration(in, "grant's time"));
          case FAILED -> new ClientMessage.Failed(s, n, duration(in, "session time"), id(in, "request id"),
              nameOrEmpty(in), oneOf(in, Output.Failure.values(), "failure"), nodes(in), detail(in));
          case LOST -> new ClientMessage.Lost(s, n, duration(in, "session time"), id(in, "request id"),
              nameOrEmpty(in),
              oneOf(in, Output.LostReason.values(), "reason"), detail(in));
          case TX_ABORTED -> new ClientMessage.TxAborted(s, n, duration(in, "session time"),
              id(in, "transaction id"), oneOf(in, Output.Failure.values(), "failure"), nodes(in), detail(in));
          case HOLDER -> new ClientMessage.Holder(s, n, duration(in, "session time"), id(in, "query id"), name(in),
              Wire.tag(in, CODEC));
          case PERMITS -> new ClientMessage.Permits(s, n, duration(in, "session time"), id(in, "query id"),
              name(in), nonNegativeInt(in, "available permits"));
          case PONG -> new ClientMessage.Pong(s, n, duration(in, "session time"));
          case AGAIN -> new ClientMessage.Again(s, n, duration(in, "session time"));
          default -> throw new CodecException("unknown client message type " + type);
        };
      } catch (IllegalArgumentException e) {
        // a claim or options the records refuse (permits above the limit, a path too deep, ...)
        throw new CodecException("invalid client message type " + type + ": " + e.getMessage(), e);
      }
      Wire.end(in, CODEC, type);
      return m;
    } catch (EOFException e) {
      throw new CodecException("truncated client message (" + (bytes.length - offset) + " bytes)", e);
    } catch (IOException e) {
      throw new CodecException("malformed client message: " + e.getMessage(), e);
    }
  }

  private static ClientMessage.Hello hello(DataInputStream in, long session, long seq) throws IOException {
    String algorithm = text(in, "algorithm");
    long lease = duration(in, "lease term");
    int n = Wire.count(in, MIN_ASKED_BYTES, CODEC, "requests");
    List<ClientMessage.Asked> asked = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      asked.add(new ClientMessage.Asked(id(in, "request id"), claim(in), in.readBoolean(), id(in, "transaction id"),
          in.readBoolean()));
    }
    n = Wire.count(in, MIN_OPEN_BYTES, CODEC, "transactions");
    List<ClientMessage.Open> txs = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      txs.add(new ClientMessage.Open(id(in, "transaction id"), options(in)));
    }
    return new ClientMessage.Hello(session, seq, algorithm, lease, asked, txs);
  }

  private static Claim claim(DataInputStream in) throws IOException {
    int n = in.readInt();
    if (n < 1 || n > Claim.MAX_DEPTH) {
      throw new CodecException("a claim's path of " + n + " elements in client message (1 to " + Claim.MAX_DEPTH
          + ")");
    }
    List<String> path = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      path.add(Wire.text(in, MAX_ELEMENT_LENGTH, CODEC, "path element"));
    }
    Claim.Mode mode = oneOf(in, Claim.Mode.values(), "claim mode");
    int permits = in.readInt();
    int limit = in.readInt();
    Claim.Writer writer = oneOf(in, Claim.Writer.values(), "writer mode");
    long quiet = duration(in, "quiet period");
    return new Claim(path, mode, permits, limit, writer, quiet, Wire.tag(in, CODEC));
  }

  private static TxOptions options(DataInputStream in) throws IOException {
    boolean abort = in.readBoolean();
    Quorum quorum = oneOf(in, Quorum.values(), "quorum");
    Set<String> nodes = nodes(in);
    return new TxOptions(abort, quorum, List.copyOf(nodes), duration(in, "transaction's lease term"));
  }

  private static Set<String> nodes(DataInputStream in) throws IOException {
    int n = Wire.count(in, MIN_TEXT_BYTES, CODEC, "node ids");
    Set<String> nodes = new TreeSet<>();
    for (int i = 0; i < n; i++) {
      nodes.add(Wire.text(in, MAX_ELEMENT_LENGTH, CODEC, "node id"));
    }
    return nodes;
  }

  private static <E extends Enum<E>> E oneOf(DataInputStream in, E[] values, String what) throws IOException {
    int b = in.readUnsignedByte();
    if (b >= values.length) {
      throw new CodecException("unknown " + what + " " + b + " in client message (0 to " + (values.length - 1) + ")");
    }
    return values[b];
  }

  private static long id(DataInputStream in, String what) throws IOException {
    return Wire.nonNegative(in, CODEC, what);
  }

  private static long duration(DataInputStream in, String what) throws IOException {
    return Wire.nonNegative(in, CODEC, what);
  }

  private static int nonNegativeInt(DataInputStream in, String what) throws IOException {
    int v = in.readInt();
    if (v < 0) {
      throw new CodecException("negative " + what + " in client message: " + v);
    }
    return v;
  }

  private static String name(DataInputStream in) throws IOException {
    return Wire.text(in, MAX_NAME_LENGTH, CODEC, "name");
  }

  /** A request's name in a failure or loss: empty when the member did not know the request. */
  private static String nameOrEmpty(DataInputStream in) throws IOException {
    String s = in.readUTF();
    if (s.length() > MAX_NAME_LENGTH || s.chars().anyMatch(Character::isISOControl)) {
      throw new CodecException("name of " + s.length() + " characters, or with a control character, in client "
          + "message (at most " + MAX_NAME_LENGTH + ")");
    }
    return s;
  }

  private static String text(DataInputStream in, String what) throws IOException {
    return Wire.text(in, MAX_TEXT_LENGTH, CODEC, what);
  }

  /** A detail may be empty (the member had nothing to add). */
  private static String detail(DataInputStream in) throws IOException {
    String s = in.readUTF();
    if (s.length() > MAX_TEXT_LENGTH) {
      throw new CodecException("detail of " + s.length() + " characters in client message (at most "
          + MAX_TEXT_LENGTH + ")");
    }
    return s;
  }
}
