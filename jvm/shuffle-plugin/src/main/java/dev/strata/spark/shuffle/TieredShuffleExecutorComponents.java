package dev.strata.spark.shuffle;

import java.util.Map;
import java.util.Optional;

import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.shuffle.ShuffleManager;
import org.apache.spark.shuffle.api.ShuffleExecutorComponents;
import org.apache.spark.shuffle.api.ShuffleMapOutputWriter;
import org.apache.spark.shuffle.api.SingleSpillShuffleMapOutputWriter;
import org.apache.spark.shuffle.sort.io.LocalDiskShuffleMapOutputWriter;
import org.apache.spark.shuffle.sort.io.LocalDiskSingleSpillMapOutputWriter;

/**
 * Spark's local-disk map output writers on the {@link TieredShuffleManager}'s resolver: one
 * resolver per executor, so that writes, reads and deletes agree on every file's place.
 */
public class TieredShuffleExecutorComponents implements ShuffleExecutorComponents {

  private final SparkConf conf;
  private TieredShuffleBlockResolver resolver;

  public TieredShuffleExecutorComponents(SparkConf conf) {
    this.conf = conf;
  }

  @Override
  public void initializeExecutor(String appId, String execId, Map<String, String> extraConfigs) {
    SparkEnv env = SparkEnv.get();
    ShuffleManager manager = env == null ? null : env.shuffleManager();
    if (!(manager instanceof TieredShuffleManager)) {
      throw new IllegalStateException(
          TieredShuffleDataIO.class.getName()
              + " works only with spark.shuffle.manager="
              + TieredShuffleManager.class.getName()
              + " (the shuffle manager is "
              + (manager == null ? "not set up" : manager.getClass().getName())
              + ").");
    }
    resolver = ((TieredShuffleManager) manager).tieredResolver();
  }

  @Override
  public ShuffleMapOutputWriter createMapOutputWriter(
      int shuffleId, long mapTaskId, int numPartitions) {
    return new LocalDiskShuffleMapOutputWriter(
        shuffleId, mapTaskId, numPartitions, resolver(), conf);
  }

  @Override
  public Optional<SingleSpillShuffleMapOutputWriter> createSingleFileMapOutputWriter(
      int shuffleId, long mapId) {
    return Optional.of(new LocalDiskSingleSpillMapOutputWriter(shuffleId, mapId, resolver()));
  }

  private TieredShuffleBlockResolver resolver() {
    if (resolver == null) {
      throw new IllegalStateException(
          "Executor components must be initialized before getting writers.");
    }
    return resolver;
  }
}
