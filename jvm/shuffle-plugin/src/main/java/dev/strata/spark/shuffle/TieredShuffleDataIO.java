package dev.strata.spark.shuffle;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.api.ShuffleDataIO;
import org.apache.spark.shuffle.api.ShuffleDriverComponents;
import org.apache.spark.shuffle.api.ShuffleExecutorComponents;
import org.apache.spark.shuffle.sort.io.LocalDiskShuffleDriverComponents;

/**
 * The ShuffleDataIO of Strata's tiered shuffle: Spark's local-disk map output writers, committing
 * through the {@link TieredShuffleManager}'s resolver, so that final shuffle files land in the
 * data dirs. On the driver it is Spark's own: removing a shuffle asks every executor's block
 * manager to unregister it, which deletes its files through the same resolver.
 *
 * <p>{@link TieredShuffleManager} sets {@code spark.shuffle.sort.io.plugin.class} to this class;
 * it works only with that manager.
 */
public class TieredShuffleDataIO implements ShuffleDataIO {

  private final SparkConf conf;

  public TieredShuffleDataIO(SparkConf conf) {
    this.conf = conf;
  }

  @Override
  public ShuffleExecutorComponents executor() {
    return new TieredShuffleExecutorComponents(conf);
  }

  @Override
  public ShuffleDriverComponents driver() {
    return new LocalDiskShuffleDriverComponents();
  }
}
