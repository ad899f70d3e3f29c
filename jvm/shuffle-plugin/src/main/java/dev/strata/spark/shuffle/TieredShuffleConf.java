package dev.strata.spark.shuffle;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.apache.spark.SparkConf;

/**
 * The plugin's settings and the checks it makes when a driver or an executor starts.
 *
 * <p>The checks throw {@link IllegalStateException} with a message that names the setting to
 * change: Spark reports it as the reason the executor (or, in local mode, the SparkContext)
 * failed to start.
 */
public final class TieredShuffleConf {

  /** Comma-separated directories for final shuffle data, index and checksum files. */
  public static final String DATA_DIRS = "spark.strata.shuffle.dataDirs";

  /** Spark's setting that names the ShuffleDataIO; the manager sets it to ours. */
  public static final String IO_PLUGIN_CLASS = "spark.shuffle.sort.io.plugin.class";

  /** Spark's own ShuffleDataIO, the default of {@link #IO_PLUGIN_CLASS}. */
  static final String LOCAL_DISK_IO = "org.apache.spark.shuffle.sort.io.LocalDiskShuffleDataIO";

  static final String SHUFFLE_SERVICE_ENABLED = "spark.shuffle.service.enabled";
  static final String DECOMMISSION_ENABLED = "spark.storage.decommission.enabled";
  static final String DECOMMISSION_SHUFFLE = "spark.storage.decommission.shuffleBlocks.enabled";

  private TieredShuffleConf() {}

  /**
   * Refuses settings the plugin does not support: the external shuffle service reads shuffle
   * files from the executors' local dirs by itself, and shuffle migration on decommission lists
   * them there; neither knows the data dirs. Also refuses another ShuffleDataIO.
   */
  static void checkSupported(SparkConf conf) {
    if (conf.getBoolean(SHUFFLE_SERVICE_ENABLED, false)) {
      throw new IllegalStateException(
          "Strata tiered shuffle does not work with the external shuffle service: the service "
              + "serves shuffle files from spark.local.dir and cannot find them in "
              + DATA_DIRS
              + ". Set "
              + SHUFFLE_SERVICE_ENABLED
              + "=false, or remove spark.shuffle.manager="
              + TieredShuffleManager.class.getName()
              + ".");
    }
    if (conf.getBoolean(DECOMMISSION_ENABLED, false)
        && conf.getBoolean(DECOMMISSION_SHUFFLE, true)) {
      throw new IllegalStateException(
          "Strata tiered shuffle does not migrate shuffle files on decommission: set "
              + DECOMMISSION_SHUFFLE
              + "=false (or "
              + DECOMMISSION_ENABLED
              + "=false).");
    }
    String io = conf.get(IO_PLUGIN_CLASS, TieredShuffleDataIO.class.getName());
    if (!io.equals(TieredShuffleDataIO.class.getName()) && !io.equals(LOCAL_DISK_IO)) {
      throw new IllegalStateException(
          "Strata tiered shuffle brings its own ShuffleDataIO, but "
              + IO_PLUGIN_CLASS
              + "="
              + io
              + ": remove that setting.");
    }
  }

  /**
   * The configured data dirs, in the order given, without duplicates. Every one must be an
   * existing, writable directory: the plugin creates nothing above its own subdirectory, so that
   * a volume that is not mounted is an error at start rather than shuffle files in the image.
   */
  static List<File> dataDirs(SparkConf conf) {
    String value = conf.get(DATA_DIRS, "").trim();
    if (value.isEmpty()) {
      throw new IllegalStateException(
          DATA_DIRS
              + " is not set: Strata tiered shuffle needs at least one directory for final "
              + "shuffle files (comma-separated absolute paths, e.g. /var/data/shuffle).");
    }
    Set<String> seen = new LinkedHashSet<>();
    List<File> dirs = new ArrayList<>();
    for (String part : value.split(",")) {
      String path = part.trim();
      if (path.isEmpty()) {
        continue;
      }
      File dir = new File(path);
      if (!dir.isAbsolute()) {
        throw new IllegalStateException(
            DATA_DIRS + ": " + path + " is not an absolute path.");
      }
      checkWritableDir(dir);
      if (seen.add(dir.getAbsolutePath())) {
        dirs.add(dir);
      }
    }
    if (dirs.isEmpty()) {
      throw new IllegalStateException(DATA_DIRS + " names no directory: '" + value + "'.");
    }
    return dirs;
  }

  private static void checkWritableDir(File dir) {
    Path path = dir.toPath();
    if (!Files.exists(path)) {
      throw new IllegalStateException(
          DATA_DIRS + ": " + dir + " does not exist (is the shuffle data volume mounted?).");
    }
    if (!Files.isDirectory(path)) {
      throw new IllegalStateException(DATA_DIRS + ": " + dir + " is not a directory.");
    }
    // Files.isWritable answers from the permission bits; a read-only mount says yes to root.
    // Creating a file is the only sure test.
    try {
      Path probe = Files.createTempFile(path, ".strata-probe-", ".tmp");
      Files.delete(probe);
    } catch (IOException | SecurityException e) {
      throw new IllegalStateException(
          DATA_DIRS + ": " + dir + " is not writable (" + e + ").", e);
    }
  }
}
