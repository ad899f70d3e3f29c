package dev.strata.spark.shuffle;

import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.shuffle.sort.SortShuffleManager;
import org.apache.spark.storage.BlockManager;

/**
 * Spark's sort shuffle manager with the final shuffle files on another tier:
 * {@code spark.shuffle.manager=dev.strata.spark.shuffle.TieredShuffleManager} and
 * {@code spark.strata.shuffle.dataDirs=/var/data/shuffle[,...]}.
 *
 * <p>Writers, readers, sorting and spilling are Spark's: spill and temp files
 * ({@code temp_shuffle_*}, {@code temp_local_*}) stay in {@code spark.local.dir}, which Spark's
 * disk block manager owns. Only the final data, index and checksum files go elsewhere, through
 * two replacements:
 *
 * <ul>
 *   <li>the block resolver ({@link TieredShuffleBlockResolver}), which the block manager asks for
 *       the file of every shuffle block it serves and which deletes a map's files when the
 *       shuffle is unregistered;
 *   <li>the ShuffleDataIO ({@link TieredShuffleDataIO}), whose map output writers commit the
 *       files through that same resolver. This manager sets
 *       {@code spark.shuffle.sort.io.plugin.class} to it.
 * </ul>
 *
 * <p>Spark creates the manager when the driver and each executor start; a data dir that is
 * missing or not writable, or a setting the plugin cannot honour (the external shuffle service,
 * shuffle migration on decommission), fails that start with a message naming the setting.
 */
public class TieredShuffleManager extends SortShuffleManager {

  private final TieredShuffleBlockResolver resolver;

  public TieredShuffleManager(SparkConf conf, boolean isDriver) {
    super(prepare(conf));
    SparkEnv env = SparkEnv.get();
    BlockManager bm = env == null ? null : env.blockManager();
    // A cluster-mode driver runs no tasks: it writes no shuffle files and need not mount the
    // data volume. An executor, or a local-mode driver, checks its data dirs now.
    boolean runsTasks = !isDriver || isLocalMaster(conf);
    this.resolver = new TieredShuffleBlockResolver(conf, bm, runsTasks);
  }

  public TieredShuffleManager(SparkConf conf) {
    this(conf, false);
  }

  private static SparkConf prepare(SparkConf conf) {
    TieredShuffleConf.checkSupported(conf);
    // The writers must commit through our resolver: use our ShuffleDataIO (SortShuffleManager
    // loads it from this setting when the first map task runs).
    conf.set(TieredShuffleConf.IO_PLUGIN_CLASS, TieredShuffleDataIO.class.getName());
    return conf;
  }

  private static boolean isLocalMaster(SparkConf conf) {
    String master = conf.get("spark.master", "");
    return master.equals("local") || master.startsWith("local[");
  }

  /** The resolver of final shuffle files; SortShuffleManager reads it through this accessor. */
  @Override
  public IndexShuffleBlockResolver shuffleBlockResolver() {
    return resolver;
  }

  /** The same resolver, typed. */
  public TieredShuffleBlockResolver tieredResolver() {
    return resolver;
  }
}
