package dev.tumbler.lock.zookeeper;

import dev.tumbler.lock.HeldLock;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Lists the grants under a service's root for {@code LockService.heldLocks()}: reads the queue directories
 * under {@code <root>/locks}, {@code /elections}, {@code /rwlocks} and {@code /semaphores}.
 *
 * <ul>
 *   <li>Exclusive locks and elections: the holder is the first node of the queue (lowest sequence); its
 *       token is the node's {@code czxid}, the token of that grant (see {@link ZooKeeperLockService}).
 *   <li>Read/write locks and semaphores: a granted node is one its holder confirmed with a {@code setData}
 *       ({@code mzxid > czxid}); the token is that {@code mzxid}, the grant's own. A grant made but not yet
 *       confirmed is not listed.
 * </ul>
 *
 * The holder is the node's name and the session that owns it ({@code ephemeralOwner}); an election's holder
 * also shows the candidate id its node carries. A grant here lasts as long as its holder's session, so no
 * remaining term is reported. Not atomic: a grant that ends while the listing runs may be left out.
 */
final class ZooKeeperHeldLocks {
  private static final Pattern SEQUENCE = Pattern.compile("-lock-(\\d+)$");
  private static final Pattern PERMITS = Pattern.compile("-p(\\d{1,10})-lock-\\d+$");

  private ZooKeeperHeldLocks() {
  }

  static List<HeldLock> list(CuratorFramework client, String root) throws Exception {
    String base = root.equals("/") ? "" : root;
    List<HeldLock> out = new ArrayList<>();
    for (String dir : children(client, base + "/locks")) {
      first(client, base + "/locks/" + dir, "mutex", false, out);
    }
    for (String dir : children(client, base + "/elections")) {
      first(client, base + "/elections/" + dir, "election", true, out);
    }
    for (String dir : children(client, base + "/rwlocks")) {
      confirmed(client, base + "/rwlocks/" + dir, out);
    }
    for (String dir : children(client, base + "/semaphores")) {
      confirmed(client, base + "/semaphores/" + dir, out);
    }
    out.sort(Comparator.comparing(HeldLock::name).thenComparing(HeldLock::kind).thenComparing(HeldLock::holder));
    return List.copyOf(out);
  }

  private static void first(CuratorFramework client, String dir, String kind, boolean withData, List<HeldLock> out)
      throws Exception {
    for (String node : queue(client, dir)) {
      Stat stat = new Stat();
      byte[] data;
      try {
        data = client.getData().storingStatIn(stat).forPath(dir + "/" + node);
      } catch (KeeperException.NoNodeException e) {
        continue; // released meanwhile: the next one holds it now
      }
      String holder = holder(node, stat);
      if (withData && data != null && data.length > 0) {
        holder = new String(data, StandardCharsets.UTF_8) + " " + holder;
      }
      out.add(new HeldLock(name(dir), kind, holder, OptionalLong.of(stat.getCzxid()), true, Optional.empty()));
      return;
    }
  }

  private static void confirmed(CuratorFramework client, String dir, List<HeldLock> out) throws Exception {
    for (String node : queue(client, dir)) {
      Stat stat = client.checkExists().forPath(dir + "/" + node);
      if (stat == null || stat.getMzxid() <= stat.getCzxid()) {
        continue; // gone, or waiting (a grant not yet confirmed)
      }
      String kind;
      String holder = holder(node, stat);
      Matcher p = PERMITS.matcher(node);
      if (p.find()) {
        kind = "semaphore";
        holder = holder + " x" + p.group(1);
      } else {
        kind = node.contains("-r-" + QueueDriver.LOCK_NAME) ? "read" : "write";
      }
      out.add(new HeldLock(name(dir), kind, holder, OptionalLong.of(stat.getMzxid()), true, Optional.empty()));
    }
  }

  private static String holder(String node, Stat stat) {
    return node + " (session 0x" + Long.toHexString(stat.getEphemeralOwner()) + ")";
  }

  private static List<String> children(CuratorFramework client, String path) throws Exception {
    try {
      return client.getChildren().forPath(path);
    } catch (KeeperException.NoNodeException e) {
      return List.of();
    }
  }

  /** The queue nodes of {@code dir} in sequence order. */
  private static List<String> queue(CuratorFramework client, String dir) throws Exception {
    List<String> nodes = new ArrayList<>();
    for (String c : children(client, dir)) {
      if (SEQUENCE.matcher(c).find()) {
        nodes.add(c);
      }
    }
    nodes.sort(Comparator.comparingLong(ZooKeeperHeldLocks::sequence));
    return nodes;
  }

  private static long sequence(String node) {
    Matcher m = SEQUENCE.matcher(node);
    return m.find() ? Long.parseLong(m.group(1)) : Long.MAX_VALUE;
  }

  private static String name(String dir) {
    return ZNodeNames.name(dir.substring(dir.lastIndexOf('/') + 1));
  }
}
