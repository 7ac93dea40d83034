package dev.tumbler.peer.core;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A binary codec made of a table, one line a message: its type byte, how its fields are written and how they are
 * read back ({@link Table#message}). The encoding is {@code version(1) type(1) fields}, big-endian; strings are
 * modified UTF-8 with a 2-byte length. The fields every algorithm writes (incarnations, terms, ids, echoes, names,
 * tags, claims, durations, counted lists) are written by {@link Out} and read back, checked, by {@link In}, so that
 * a new message is a line for its writer and a line for its reader.
 *
 * <p>Decoding checks the version, the type, every field as {@link In} reads it (a negative id, an empty name, a
 * control character, a count larger than the bytes left: each a {@link CodecException} naming the codec and the
 * field, never an allocation), that a record accepts what was read (its constructor's {@link IllegalArgumentException}
 * becomes a {@code CodecException}), and that nothing trails. Thread safe.
 *
 * @param <M> the algorithm's messages
 */
public abstract class WireCodec<M extends PeerMessage> implements MessageCodec<M> {

  /** Writes the fields of a message (or of an item of a list). */
  @FunctionalInterface
  public interface Writer<T> {
    void write(T value, Out out) throws IOException;
  }

  /** A node asks its elected server what is held under {@code prefixes} ({@link Table#listing}). */
  public interface ListingAsk {
    long inc();

    long queryId();

    List<String> prefixes();

    /** Makes the question from its fields. */
    @FunctionalInterface
    interface Maker<T> {
      T make(long inc, long queryId, List<String> prefixes);
    }
  }

  /** The server of {@code term} answers {@link ListingAsk} {@code queryId} ({@link Table#listing}). */
  public interface ListingAnswer {
    long term();

    long queryId();

    List<Output.Listed> held();

    /** Makes the answer from its fields. */
    @FunctionalInterface
    interface Maker<T> {
      T make(long term, long queryId, List<Output.Listed> held);
    }
  }

  /** Reads the fields of a message (or of an item of a list). */
  @FunctionalInterface
  public interface Reader<T> {
    T read(In in) throws IOException;
  }

  /**
   * The longest lock name on the wire, by default: the provider's qualified name (at most 517 characters), with room
   * for a one-character kind in front.
   */
  public static final int MAX_NAME_LENGTH = 520;

  private record Kind<M>(byte type, Writer<M> writer, Reader<? extends M> reader) {}

  /**
   * What a codec is made of: its name, version, the longest name it carries, the least bytes of a message, and its
   * messages. Built once (in a static initializer), then read only.
   */
  public static final class Table<M extends PeerMessage> {
    private final String name;
    private final byte version;
    private final Class<M> type;
    private int maxNameLength = MAX_NAME_LENGTH;
    private int minBytes = 2;
    private final Map<Class<?>, Kind<M>> byClass = new HashMap<>();
    @SuppressWarnings("unchecked")
    private final Kind<M>[] byType = new Kind[Byte.MAX_VALUE + 1];

    private Table(String name, byte version, Class<M> type) {
      this.name = Objects.requireNonNull(name, "name");
      this.version = version;
      this.type = Objects.requireNonNull(type, "type");
    }

    /** The longest name {@link In#name} reads (else {@link WireCodec#MAX_NAME_LENGTH}). */
    public Table<M> names(int maxLength) {
      this.maxNameLength = maxLength;
      return this;
    }

    /** Messages shorter than {@code bytes} (version and type included) are refused before anything is read. */
    public Table<M> minBytes(int bytes) {
      this.minBytes = bytes;
      return this;
    }

    /**
     * The message {@code kind}, of type byte {@code type} (1 to 127): written by {@code writer}, read back by
     * {@code reader}.
     *
     * @throws IllegalStateException if the type byte or the record is in the table already, or the type is out of range
     */
    @SuppressWarnings("unchecked")
    public <T extends M> Table<M> message(int type, Class<T> kind, Writer<? super T> writer,
        Reader<? extends T> reader) {
      if (type < 1 || type > Byte.MAX_VALUE || byType[type] != null || byClass.containsKey(kind)) {
        throw new IllegalStateException(name + " codec: type " + type + " out of range, or it or "
            + kind.getSimpleName() + " twice");
      }
      Kind<M> k = new Kind<>((byte) type, (Writer<M>) writer, reader);
      byType[type] = k;
      byClass.put(kind, k);
      return this;
    }

    /**
     * The two messages by which a node asks its elected server what is held: the question {@code ask} (type
     * {@code askType}: the node's incarnation, the query id, the name prefixes) and the answer {@code answer} (type
     * {@code answerType}: the server's term, the query id, the claims listed).
     */
    public <Q extends M, A extends M> Table<M> listing(int askType, Class<Q> ask, ListingAsk.Maker<Q> newAsk,
        int answerType, Class<A> answer, ListingAnswer.Maker<A> newAnswer) {
      if (!ListingAsk.class.isAssignableFrom(ask) || !ListingAnswer.class.isAssignableFrom(answer)) {
        throw new IllegalStateException(name + " codec: " + ask.getSimpleName() + " or " + answer.getSimpleName()
            + " is not a listing's message");
      }
      Writer<Q> writeAsk = (m, o) -> {
        ListingAsk q = (ListingAsk) m;
        o.inc(q.inc()).id(q.queryId()).strings(q.prefixes());
      };
      Writer<A> writeAnswer = (m, o) -> {
        ListingAnswer a = (ListingAnswer) m;
        o.term(a.term()).id(a.queryId()).list(a.held(), (h, x) -> x.listed(h));
      };
      return message(askType, ask, writeAsk, i -> newAsk.make(i.inc(), i.id("query id"), i.prefixes()))
          .message(answerType, answer, writeAnswer, i -> newAnswer.make(i.term(), i.id("query id"),
              i.list(In.MIN_LISTED_BYTES, "listed claims", In::listed)));
    }

    /** Every record of the message type, through its sealed sub-interfaces, has a line. */
    private void checkComplete(Class<?> c) {
      if (c.isSealed()) {
        for (Class<?> p : c.getPermittedSubclasses()) {
          checkComplete(p);
        }
      } else if (!byClass.containsKey(c)) {
        throw new IllegalStateException(name + " codec has no line for " + c.getName());
      }
    }
  }

  /** The table of a codec called {@code name} (in its messages) for the sealed message type {@code type}. */
  public static <M extends PeerMessage> Table<M> table(String name, byte version, Class<M> type) {
    return new Table<>(name, version, type);
  }

  private final Table<M> table;

  /**
   * @param table the codec's messages; every record of its sealed message type must have a line
   * @throws IllegalStateException if one has none
   */
  protected WireCodec(Table<M> table) {
    this.table = Objects.requireNonNull(table, "table");
    table.checkComplete(table.type);
  }

  /** The type byte of the message {@code kind} (for tests that write a message by hand). */
  public final byte type(Class<? extends M> kind) {
    return table.byClass.get(kind).type();
  }

  @Override
  public final byte[] encode(M message) {
    return encode(message, 0);
  }

  @Override
  public final byte[] encode(M message, int headroom) {
    Kind<M> k = table.byClass.get(message.getClass());
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(headroom + 64);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.write(new byte[headroom]);
      out.writeByte(table.version);
      out.writeByte(k.type());
      k.writer().write(message, new Out(out));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  @Override
  public final M decode(byte[] bytes) {
    return decode(bytes, 0);
  }

  @Override
  public final M decode(byte[] bytes, int offset) {
    String name = table.name;
    if (bytes == null || offset < 0 || bytes.length - offset < table.minBytes) {
      throw new CodecException(name + " message too short: " + (bytes == null ? "null"
          : Math.max(0, bytes.length - offset) + " bytes"));
    }
    In in = new In(new DataInputStream(new ByteArrayInputStream(bytes, offset, bytes.length - offset)), table);
    try {
      byte version = in.in.readByte();
      if (version != table.version) {
        throw new CodecException(name + " message version " + version + " is not supported (expected "
            + table.version + ")");
      }
      byte type = in.in.readByte();
      Kind<M> k = type > 0 ? table.byType[type] : null;
      if (k == null) {
        throw new CodecException("unknown " + name + " message type " + type);
      }
      M m;
      try {
        m = k.reader().read(in);
      } catch (IllegalArgumentException e) {
        // a record that refuses what was read (permits above the limit, a path too deep, ...)
        throw new CodecException("invalid " + name + " message type " + type + ": " + e.getMessage(), e);
      }
      if (in.in.available() > 0) {
        throw new CodecException(name + " message type " + type + " has " + in.in.available() + " trailing bytes");
      }
      return m;
    } catch (EOFException e) {
      throw new CodecException("truncated " + name + " message (" + (bytes.length - offset) + " bytes)", e);
    } catch (IOException e) {
      throw new CodecException("malformed " + name + " message: " + e.getMessage(), e);
    }
  }

  /** Writes fields: each method writes one, and returns this writer for the next. */
  public static final class Out {
    private final DataOutputStream out;

    private Out(DataOutputStream out) {
      this.out = out;
    }

    /** A node's incarnation. */
    public Out inc(long inc) throws IOException {
      return number(inc);
    }

    /** A term. */
    public Out term(long term) throws IOException {
      return number(term);
    }

    /** An id, a token, a count of something: read back by {@link In#id}. */
    public Out id(long id) throws IOException {
      return number(id);
    }

    /** An echo: a client's clock when it sent what a reply answers, returned unread. */
    public Out echo(long echo) throws IOException {
      return number(echo);
    }

    /** Any long: eight bytes. */
    public Out number(long value) throws IOException {
      out.writeLong(value);
      return this;
    }

    /** Any int: four bytes. */
    public Out number(int value) throws IOException {
      out.writeInt(value);
      return this;
    }

    /** An int from 0 to 255 in one byte (a short count). */
    public Out unsignedByte(int value) throws IOException {
      out.writeByte(value);
      return this;
    }

    public Out flag(boolean value) throws IOException {
      out.writeBoolean(value);
      return this;
    }

    /** A session, a node id, a detail: any string. */
    public Out text(String value) throws IOException {
      out.writeUTF(value);
      return this;
    }

    /** A name: read back by {@link In#name}. */
    public Out name(String name) throws IOException {
      return text(name);
    }

    /** A claim's tag ({@link Claim#tag()}). */
    public Out tag(String tag) throws IOException {
      return text(tag);
    }

    /** An enum constant, by its ordinal in one byte. */
    public Out ordinal(Enum<?> value) throws IOException {
      out.writeByte(value.ordinal());
      return this;
    }

    /** A claim: its path, mode, permits, limit, writer policy, quiet period and tag. */
    public Out claim(Claim c) throws IOException {
      strings(c.path());
      ordinal(c.mode()).number(c.permits()).number(c.limit()).ordinal(c.writer()).number(c.quietNanos());
      return tag(c.tag());
    }

    /** A count, then each of {@code items}. */
    public <T> Out list(Collection<T> items, Writer<? super T> item) throws IOException {
      out.writeInt(items.size());
      for (T t : items) {
        item.write(t, this);
      }
      return this;
    }

    /** A count, then each string. */
    public Out strings(Collection<String> items) throws IOException {
      return list(items, (s, o) -> o.text(s));
    }

    /** A claim in use, as a listing gives it ({@link Output.Listed}): read back by {@link In#listed}. */
    public Out listed(Output.Listed l) throws IOException {
      name(l.name()).ordinal(l.mode()).number(l.permits()).text(l.holder()).number(l.token()).flag(l.tokenIsHolders());
      return number(l.remainingNanos());
    }
  }

  /**
   * Reads fields, checking each: every value a peer sends is checked before it is used, and a bad one is a
   * {@link CodecException} that names the codec and the field, never an allocation or a negative id.
   */
  public static final class In {
    private final DataInputStream in;
    private final String codec;
    private final int maxNameLength;

    private In(DataInputStream in, Table<?> table) {
      this.in = in;
      this.codec = table.name;
      this.maxNameLength = table.maxNameLength;
    }

    /** A node's incarnation: not negative. */
    public long inc() throws IOException {
      return id("incarnation");
    }

    /** A term: not negative. */
    public long term() throws IOException {
      return id("term");
    }

    /** An id, a token, a total, a duration: a long that may not be negative, named {@code what} if it is. */
    public long id(String what) throws IOException {
      long v = in.readLong();
      if (v < 0) {
        throw new CodecException("negative " + what + " in " + codec + " message: " + v);
      }
      return v;
    }

    /** An echo: any long (a client's clock). */
    public long echo() throws IOException {
      return in.readLong();
    }

    /** Any long. */
    public long number() throws IOException {
      return in.readLong();
    }

    /** Any int. */
    public int integer() throws IOException {
      return in.readInt();
    }

    /** One byte, 0 to 255 (a short count, a code the caller checks). */
    public int unsignedByte() throws IOException {
      return in.readUnsignedByte();
    }

    /** An int from 1 to {@link Integer#MAX_VALUE} (permits, a limit). */
    public int positive(String what) throws IOException {
      int v = in.readInt();
      if (v < 1) {
        throw new CodecException(what + " " + v + " in " + codec + " message (1 to " + Integer.MAX_VALUE + ")");
      }
      return v;
    }

    /** An int that may not be negative. */
    public int nonNegative(String what) throws IOException {
      int v = in.readInt();
      if (v < 0) {
        throw new CodecException("negative " + what + " in " + codec + " message: " + v);
      }
      return v;
    }

    public boolean flag() throws IOException {
      return in.readBoolean();
    }

    /** A name of 1 to the codec's longest, with no control character. */
    public String name() throws IOException {
      return text(maxNameLength, "name");
    }

    /** A string of 1 to {@code max} characters with no control character. */
    public String text(int max, String what) throws IOException {
      String s = in.readUTF();
      if (s.isEmpty() || s.length() > max) {
        throw new CodecException(what + " of " + s.length() + " characters in " + codec + " message (1 to " + max
            + ")");
      }
      for (int i = 0; i < s.length(); i++) {
        if (Character.isISOControl(s.charAt(i))) {
          throw new CodecException(what + " with a control character in " + codec + " message");
        }
      }
      return s;
    }

    /** A string of 0 to {@code max} characters (a detail the writer may leave empty), any character. */
    public String textOrEmpty(int max, String what) throws IOException {
      String s = in.readUTF();
      if (s.length() > max) {
        throw new CodecException(what + " of " + s.length() + " characters in " + codec + " message (at most " + max
            + ")");
      }
      return s;
    }

    /** A claim's tag: empty, or at most {@link Claim#MAX_TAG_LENGTH} characters with no control character. */
    public String tag() throws IOException {
      String s = in.readUTF();
      if (s.length() > Claim.MAX_TAG_LENGTH || s.chars().anyMatch(Character::isISOControl)) {
        throw new CodecException("tag of " + s.length() + " characters, or with a control character, in " + codec
            + " message (at most " + Claim.MAX_TAG_LENGTH + ")");
      }
      return s;
    }

    /** An enum constant by its ordinal, one of {@code values}. */
    public <E extends Enum<E>> E oneOf(E[] values, String what) throws IOException {
      int b = in.readUnsignedByte();
      if (b >= values.length) {
        throw new CodecException("unknown " + what + " " + b + " in " + codec + " message (0 to "
            + (values.length - 1) + ")");
      }
      return values[b];
    }

    /**
     * A claim, as {@link Out#claim} writes it: its path (1 to {@link Claim#MAX_DEPTH} elements of 1 to
     * {@code maxElement} characters), mode, permits, limit, writer policy, quiet period and tag.
     */
    public Claim claim(int maxElement) throws IOException {
      int n = in.readInt();
      if (n < 1 || n > Claim.MAX_DEPTH) {
        throw new CodecException("a claim's path of " + n + " elements in " + codec + " message (1 to "
            + Claim.MAX_DEPTH + ")");
      }
      List<String> path = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        path.add(text(maxElement, "path element"));
      }
      Claim.Mode mode = oneOf(Claim.Mode.values(), "claim mode");
      int permits = in.readInt();
      int limit = in.readInt();
      Claim.Writer writer = oneOf(Claim.Writer.values(), "writer mode");
      long quiet = id("quiet period");
      return new Claim(path, mode, permits, limit, writer, quiet, tag());
    }

    /** The least bytes of a listed claim ({@link #listed}): one-character name and holder. */
    public static final int MIN_LISTED_BYTES = 3 + 1 + 4 + 3 + 8 + 1 + 8;

    /** The longest holder a listing carries: a node id and a tag. */
    private static final int MAX_HOLDER_LENGTH = 1024 + Claim.MAX_TAG_LENGTH;

    /** A claim in use, as {@link Out#listed} writes it: its permits positive, its token and time left not negative. */
    public Output.Listed listed() throws IOException {
      String name = name();
      Claim.Mode mode = oneOf(Claim.Mode.values(), "claim mode");
      int permits = positive("permits");
      String holder = text(MAX_HOLDER_LENGTH, "holder");
      long token = id("token");
      boolean holders = flag();
      long remaining = in.readLong();
      if (remaining < -1) {
        throw new CodecException("time left " + remaining + " in " + codec + " message (-1 for none, or at least 0)");
      }
      if (holders && token == 0) {
        throw new CodecException("a holder's own token of 0 in " + codec + " message");
      }
      return new Output.Listed(name, mode, permits, holder, token, holders, remaining);
    }

    /** The name prefixes of a listing's question: a count, then each (1 to the codec's longest name). */
    public List<String> prefixes() throws IOException {
      return list(3, "prefixes", In::name);
    }

    /**
     * A count of items of at least {@code minBytes} bytes each, checked against the bytes left (a corrupt count is
     * refused, never allocated), then each item.
     */
    public <T> List<T> list(int minBytes, String what, Reader<? extends T> item) throws IOException {
      int n = in.readInt();
      if (n < 0 || n > in.available() / minBytes) {
        throw new CodecException(codec + " message claims " + n + " " + what + " in " + in.available() + " bytes");
      }
      List<T> items = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        items.add(item.read(this));
      }
      return items;
    }
  }
}
