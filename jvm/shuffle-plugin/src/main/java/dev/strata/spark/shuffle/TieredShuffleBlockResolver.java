package dev.strata.spark.shuffle;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.stream.Stream;

import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.network.shuffle.ExecutorDiskUtils;
import org.apache.spark.network.util.JavaUtils;
import org.apache.spark.network.shuffle.checksum.ShuffleChecksumHelper;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.storage.BlockManager;
import org.apache.spark.storage.ShuffleChecksumBlockId;
import org.apache.spark.storage.ShuffleDataBlockId;
import org.apache.spark.storage.ShuffleIndexBlockId;
import org.apache.spark.util.ShutdownHookManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import scala.Option;

/**
 * Spark's index shuffle block resolver with the final shuffle files moved: every path of a
 * shuffle data, index or checksum file (and of their temporary files, which sit beside them)
 * lies under the data dirs of {@link TieredShuffleConf#DATA_DIRS} instead of
 * {@code spark.local.dir}. Everything else — the file format, the atomic commit, serving blocks
 * by offset, deleting a map's files — is Spark's own code, which reaches the files only through
 * the methods overridden here.
 *
 * <p>Layout: each executor owns one subdirectory per data dir, named like its first Spark local
 * dir ({@code blockmgr-<uuid>}), so that executors sharing a host and a data dir never collide
 * and an executor reading another one's files on the same host (host-local disk reads) finds
 * them from that executor's local dir names. Inside, files are spread exactly as Spark spreads
 * block files: {@link ExecutorDiskUtils#getFilePath} hashes the file name to one of the data dirs
 * and to one of {@code spark.diskStore.subDirectories} subdirectories, so the same file maps to
 * the same place on write, read and delete. The subdirectories are deleted when the executor
 * stops (or its JVM exits).
 */
public class TieredShuffleBlockResolver extends IndexShuffleBlockResolver {

  private static final Logger LOG = LoggerFactory.getLogger(TieredShuffleBlockResolver.class);

  private final SparkConf conf;
  private volatile Layout layout;

  /**
   * @param eager validate the data dirs and create this executor's subdirectories now (an
   *     executor, or a driver that runs tasks); otherwise on first use (a cluster-mode driver,
   *     which writes no shuffle files and need not mount the data volume).
   */
  public TieredShuffleBlockResolver(SparkConf conf, BlockManager blockManager, boolean eager) {
    super(conf, blockManager);
    this.conf = conf;
    if (eager) {
      layout();
    }
  }

  /** This executor's roots under the data dirs, one per data dir. */
  public List<File> roots() {
    return layout().roots;
  }

  private Layout layout() {
    Layout l = layout;
    if (l == null) {
      synchronized (this) {
        l = layout;
        if (l == null) {
          l = Layout.create(conf);
          layout = l;
        }
      }
    }
    return l;
  }

  @Override
  public File getDataFile(int shuffleId, long mapId, Option<String[]> dirs) {
    return file(new ShuffleDataBlockId(shuffleId, mapId, NOOP_REDUCE_ID).name(), dirs);
  }

  @Override
  public File getIndexFile(int shuffleId, long mapId, Option<String[]> dirs) {
    return file(new ShuffleIndexBlockId(shuffleId, mapId, NOOP_REDUCE_ID).name(), dirs);
  }

  @Override
  public File getChecksumFile(int shuffleId, long mapId, String algorithm, Option<String[]> dirs) {
    String name = ShuffleChecksumHelper.getChecksumFileName(
        new ShuffleChecksumBlockId(shuffleId, mapId, NOOP_REDUCE_ID).name(), algorithm);
    return file(name, dirs);
  }

  /**
   * The file {@code name} of this executor or, for a host-local read, of the executor whose
   * Spark local dirs are {@code dirs}.
   */
  private File file(String name, Option<String[]> dirs) {
    Layout l = layout();
    if (dirs.isDefined() && dirs.get().length > 0) {
      String[] other = l.rootsOf(dirs.get());
      return new File(ExecutorDiskUtils.getFilePath(other, l.subDirs, name));
    }
    return l.file(name);
  }

  @Override
  public void stop() {
    Layout l = layout;
    if (l != null) {
      l.delete();
    }
    super.stop();
  }

  @Override
  public String toString() {
    Layout l = layout;
    return "TieredShuffleBlockResolver" + (l == null ? "(not started)" : l.roots);
  }

  /** NOOP_REDUCE_ID of Spark's resolver: shuffle files are named after reduce id 0. */
  private static final int NOOP_REDUCE_ID = 0;

  /** Where this executor's files go, fixed when the executor starts. */
  private static final class Layout {
    final List<File> dataDirs;
    final List<File> roots;
    final String[] rootPaths;
    final int subDirs;
    /** Per root, its subdirectories once created. */
    private final List<AtomicReferenceArray<File>> subDirCache;

    private Layout(List<File> dataDirs, String rootName, int subDirs) {
      this.dataDirs = dataDirs;
      this.subDirs = subDirs;
      List<File> r = new ArrayList<>();
      for (File d : dataDirs) {
        r.add(new File(d, rootName));
      }
      this.roots = Collections.unmodifiableList(r);
      this.rootPaths = r.stream().map(File::getPath).toArray(String[]::new);
      List<AtomicReferenceArray<File>> c = new ArrayList<>();
      for (int i = 0; i < r.size(); i++) {
        c.add(new AtomicReferenceArray<>(subDirs));
      }
      this.subDirCache = c;
    }

    static Layout create(SparkConf conf) {
      List<File> dataDirs = TieredShuffleConf.dataDirs(conf);
      SparkEnv env = SparkEnv.get();
      if (env == null || env.blockManager() == null) {
        throw new IllegalStateException("Strata tiered shuffle: no SparkEnv block manager yet");
      }
      BlockManager bm = env.blockManager();
      String rootName = rootName(bm.diskBlockManager().localDirsString());
      Layout l = new Layout(dataDirs, rootName, bm.subDirsPerLocalDir());
      for (File root : l.roots) {
        try {
          Files.createDirectories(root.toPath());
        } catch (IOException e) {
          throw new IllegalStateException(
              TieredShuffleConf.DATA_DIRS + ": cannot create " + root + " (" + e + ").", e);
        }
        ShutdownHookManager.registerShutdownDeleteDir(root);
      }
      LOG.info("Strata tiered shuffle: final shuffle files in {}, spill and temp files in {}",
          l.roots, String.join(",", bm.diskBlockManager().localDirsString()));
      return l;
    }

    /** The subdirectory name of the executor whose Spark local dirs are {@code localDirs}. */
    static String rootName(String[] localDirs) {
      return new File(localDirs[0]).getName();
    }

    String[] rootsOf(String[] localDirs) {
      String name = rootName(localDirs);
      String[] out = new String[dataDirs.size()];
      for (int i = 0; i < out.length; i++) {
        out[i] = new File(dataDirs.get(i), name).getPath();
      }
      return out;
    }

    /**
     * The file {@code name} in this executor's roots, its subdirectory created if need be: the
     * place {@link ExecutorDiskUtils#getFilePath} names, computed like Spark's DiskBlockManager
     * does it, with the subdirectories cached.
     */
    File file(String name) {
      int hash = JavaUtils.nonNegativeHash(name);
      int dirId = hash % rootPaths.length;
      int subDirId = (hash / rootPaths.length) % subDirs;
      AtomicReferenceArray<File> cache = subDirCache.get(dirId);
      File sub = cache.get(subDirId);
      if (sub == null) {
        sub = new File(roots.get(dirId), String.format("%02x", subDirId));
        try {
          Files.createDirectories(sub.toPath());
        } catch (IOException e) {
          throw new UncheckedIOException("Strata tiered shuffle: cannot create " + sub, e);
        }
        cache.set(subDirId, sub);
      }
      return new File(sub, name);
    }

    void delete() {
      for (File root : roots) {
        ShutdownHookManager.removeShutdownDeleteDir(root);
        Path p = root.toPath();
        if (!Files.exists(p)) {
          continue;
        }
        try (Stream<Path> walk = Files.walk(p)) {
          walk.sorted(Comparator.reverseOrder()).forEach(q -> q.toFile().delete());
        } catch (IOException | UncheckedIOException e) {
          LOG.warn("Strata tiered shuffle: could not delete {}", root, e);
        }
      }
    }
  }
}
