package dev.strata.spark.shuffle;

import static dev.strata.spark.shuffle.FileWatcher.Kind.CHECKSUM;
import static dev.strata.spark.shuffle.FileWatcher.Kind.DATA;
import static dev.strata.spark.shuffle.FileWatcher.Kind.FINAL_TEMP;
import static dev.strata.spark.shuffle.FileWatcher.Kind.INDEX;
import static dev.strata.spark.shuffle.FileWatcher.Kind.TEMP_LOCAL;
import static dev.strata.spark.shuffle.FileWatcher.Kind.TEMP_SHUFFLE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.lang.ref.Reference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

import scala.Option;

/**
 * The plugin with real Spark in local mode, little memory (so that sorts spill) and two data
 * dirs: where every kind of file appears while the jobs run, that results are right, that
 * unregistering a shuffle deletes its files, and that without the plugin Spark is stock Spark.
 */
class TieredShuffleTest extends SparkDirs {

  /** Spark's memory for the tests: 16 MiB, of which a task gets at most about 5 MiB. */
  static final long SMALL_MEMORY = 16L << 20;

  static final long SORT_RECORDS = 400_000;
  static final long GROUP_RECORDS = 400_000;
  static final long GROUPS = 100_000;

  /**
   * Sort-based writers only, and collections that spill from 1 MiB on (5 MiB by default), so
   * that small jobs spill often.
   */
  static final Map<String, String> SPILLING = Jobs.conf(
      "spark.shuffle.sort.bypassMergeThreshold", "1",
      "spark.shuffle.spill.initialMemoryThreshold", Long.toString(1L << 20));

  private FileWatcher watch() {
    return new FileWatcher(Map.of("local", local, "data1", data1, "data2", data2));
  }

  private SparkSession start(boolean plugin, Map<String, String> extra) {
    spark = Jobs.start(local, List.of(data1, data2), plugin, SMALL_MEMORY, extra);
    return spark;
  }

  @Test
  void finalShuffleFilesGoToTheDataDirsAndSpillsStayLocal() throws Exception {
    // bypassMergeThreshold=1: the RDD sort uses the sort writer (ExternalSorter), Spark SQL the
    // serialized (unsafe) writer; both spill map-side and the sort spills reduce-side.
    start(true, SPILLING);
    Jobs.SpillCounter spills = Jobs.SpillCounter.register(spark);
    // The jobs' RDD and query stay reachable until the end, so that Spark's ContextCleaner does
    // not unregister their shuffles before the test does.
    JavaPairRDD<Long, Long> sorted;
    Dataset<Row> grouped;
    try (FileWatcher w = watch()) {
      sorted = Jobs.sortJob(spark, SORT_RECORDS, 4, 6);
      grouped = Jobs.groupByJob(spark, GROUP_RECORDS, GROUPS, 4);
      w.stop();
      assertTrue(spills.total(spark) > 0, "the jobs spilled");
      System.out.printf("spilled %d bytes; %d files created: %s%n", spills.total(spark),
          w.events(), w.kindsSeen());
      Set<String> dataTrees = Set.of("data1", "data2");
      // final files: in both data dirs (spread by hash), never in spark.local.dir
      assertEquals(dataTrees, w.treesWith(DATA), "trees with shuffle .data files");
      assertEquals(dataTrees, w.treesWith(INDEX), "trees with shuffle .index files");
      assertSubset(dataTrees, w.treesWith(CHECKSUM), "trees with shuffle checksum files");
      assertFalse(w.treesWith(CHECKSUM).isEmpty(), "checksum files were written");
      assertSubset(dataTrees, w.treesWith(FINAL_TEMP), "trees with final files being written");
      // spill and temp files: only in spark.local.dir
      assertEquals(Set.of("local"), w.treesWith(TEMP_SHUFFLE), "trees with temp_shuffle_ files");
      assertSubset(Set.of("local"), w.treesWith(TEMP_LOCAL), "trees with temp_local_ files");
      assertFalse(w.overflowed(), "the watcher saw every file created");
    }

    // After the jobs: the map outputs are in the data dirs, at the place the resolver names
    // for them (the place reads and deletes use), and nothing of them in spark.local.dir.
    TieredShuffleBlockResolver resolver = resolver();
    List<Path> dataFiles = shuffleFiles(DATA);
    assertFalse(dataFiles.isEmpty());
    for (Path f : dataFiles) {
      long[] id = ids(f);
      assertEquals(f.toFile(), resolver.getDataFile((int) id[0], id[1]));
      File index = resolver.getIndexFile((int) id[0], id[1], Option.empty());
      assertTrue(index.isFile(), index + " exists");
      assertTrue(index.toPath().startsWith(data1) || index.toPath().startsWith(data2), index.toString());
      // a host-local read names the executor by its local dirs; ours map to the same file
      String[] localDirs = SparkEnv.get().blockManager().diskBlockManager().localDirsString();
      assertEquals(f.toFile(), resolver.getDataFile((int) id[0], id[1], Option.apply(localDirs)));
    }
    assertEquals(List.of(), FileWatcher.list(local, DATA));
    assertEquals(List.of(), FileWatcher.list(local, INDEX));

    // Unregistering a shuffle (what Spark's ContextCleaner does once its RDD is gone) deletes its
    // files from the data dirs, and only its files.
    int sortShuffle = Jobs.shuffleId(sorted);
    Set<Integer> shuffles = dataFiles.stream().map(f -> (int) ids(f)[0])
        .collect(Collectors.toCollection(TreeSet::new));
    assertTrue(shuffles.contains(sortShuffle) && shuffles.size() >= 2, "shuffles " + shuffles);
    spark.sparkContext().cleaner().get().doCleanupShuffle(sortShuffle, true);
    for (Path f : shuffleFiles(null)) {
      assertTrue(ids(f)[0] != sortShuffle, "left after unregistering shuffle " + sortShuffle + ": " + f);
    }
    assertFalse(shuffleFiles(DATA).isEmpty(), "the other shuffles' files stay");
    for (int s : shuffles) {
      spark.sparkContext().cleaner().get().doCleanupShuffle(s, true);
    }
    assertEquals(List.of(), shuffleFiles(null), "files left after unregistering every shuffle");
    Reference.reachabilityFence(sorted);
    Reference.reachabilityFence(grouped);

    // Stopping Spark removes the executor's directories from the data dirs.
    List<File> roots = resolver.roots();
    assertEquals(2, roots.size());
    Jobs.stop(spark);
    spark = null;
    for (File r : roots) {
      assertFalse(r.exists(), r + " is left after Spark stopped");
    }
    assertEquals(List.of(), FileWatcher.list(data1));
    assertEquals(List.of(), FileWatcher.list(data2));
  }

  @Test
  void bypassMergeWriterWritesToTheDataDirs() throws Exception {
    // Few reducers and no map-side combine: Spark's bypass-merge writer, which writes one
    // temp_shuffle file per reducer in spark.local.dir and concatenates them into the data file.
    start(true, Map.of());
    try (FileWatcher w = watch()) {
      Jobs.groupByKeyJob(spark, 100_000, 1000, 4, 5);
      w.stop();
      assertSubset(Set.of("data1", "data2"), w.treesWith(DATA), "trees with .data files");
      assertFalse(w.treesWith(DATA).isEmpty());
      assertEquals(Set.of("local"), w.treesWith(TEMP_SHUFFLE), "trees with temp_shuffle_ files");
    }
    assertEquals(List.of(), FileWatcher.list(local, DATA));
  }

  @Test
  void withoutThePluginSparkIsStockSpark() throws Exception {
    start(false, SPILLING);
    assertEquals("org.apache.spark.shuffle.sort.SortShuffleManager",
        SparkEnv.get().shuffleManager().getClass().getName());
    Jobs.SpillCounter spills = Jobs.SpillCounter.register(spark);
    try (FileWatcher w = watch()) {
      Jobs.sortJob(spark, SORT_RECORDS, 4, 6);
      Jobs.groupByJob(spark, GROUP_RECORDS, GROUPS, 4);
      w.stop();
      assertTrue(spills.total(spark) > 0, "the jobs spilled");
      assertEquals(Set.of("local"), w.treesWith(DATA), "trees with .data files");
      assertEquals(Set.of("local"), w.treesWith(INDEX), "trees with .index files");
      assertEquals(Set.of("local"), w.treesWith(TEMP_SHUFFLE), "trees with temp_shuffle_ files");
      assertEquals(Set.of(), w.filesSeenIn("data1"), "files in data1");
      assertEquals(Set.of(), w.filesSeenIn("data2"), "files in data2");
    }
    assertFalse(FileWatcher.list(local, DATA).isEmpty(), "Spark keeps map outputs in its local dir");
  }

  @Test
  void theManagerSharesItsResolverWithTheWriters() {
    start(true, Map.of());
    TieredShuffleManager m = (TieredShuffleManager) SparkEnv.get().shuffleManager();
    assertSame(m.tieredResolver(), m.shuffleBlockResolver());
    assertEquals(TieredShuffleDataIO.class.getName(),
        spark.sparkContext().getConf().get(TieredShuffleConf.IO_PLUGIN_CLASS));
    assertEquals(List.of(data1.resolve(m.tieredResolver().roots().get(0).getName()).toFile(),
        data2.resolve(m.tieredResolver().roots().get(0).getName()).toFile()),
        m.tieredResolver().roots());
  }

  // --- errors at start ---------------------------------------------------------------------

  @Test
  void aMissingDataDirFailsAtStart() {
    Path missing = base.resolve("not-mounted");
    String msg = startFails(List.of(data1, missing), Map.of());
    assertContains(msg, TieredShuffleConf.DATA_DIRS + ": " + missing + " does not exist");
  }

  @Test
  void anUnwritableDataDirFailsAtStart() throws IOException {
    Path ro = unwritableDir();
    String msg = startFails(List.of(ro), Map.of());
    assertContains(msg, TieredShuffleConf.DATA_DIRS + ": " + ro + " is not writable");
  }

  @Test
  void aFileAsDataDirFailsAtStart() throws IOException {
    Path file = Files.writeString(base.resolve("a-file"), "x");
    String msg = startFails(List.of(file), Map.of());
    assertContains(msg, file + " is not a directory");
  }

  @Test
  void noDataDirsFailsAtStart() {
    String msg = startFails(List.of(), Map.of());
    assertContains(msg, TieredShuffleConf.DATA_DIRS + " is not set");
  }

  @Test
  void theExternalShuffleServiceIsRefused() {
    String msg = startFails(List.of(data1), Map.of("spark.shuffle.service.enabled", "true"));
    assertContains(msg, "does not work with the external shuffle service");
    assertContains(msg, "spark.shuffle.service.enabled=false");
  }

  @Test
  void shuffleMigrationOnDecommissionIsRefused() {
    String msg = startFails(List.of(data1), Map.of("spark.storage.decommission.enabled", "true"));
    assertContains(msg, "spark.storage.decommission.shuffleBlocks.enabled=false");
  }

  @Test
  void anotherShuffleDataIOIsRefused() {
    String msg = startFails(List.of(data1),
        Map.of(TieredShuffleConf.IO_PLUGIN_CLASS, "com.example.OtherShuffleDataIO"));
    assertContains(msg, "com.example.OtherShuffleDataIO");
  }

  // --- helpers -----------------------------------------------------------------------------

  /** Starts Spark with the plugin, expects it to fail, returns the messages of the causes. */
  private String startFails(List<Path> dataDirs, Map<String, String> extra) {
    Throwable t = assertThrows(Throwable.class, () -> {
      spark = Jobs.start(local, dataDirs, true, SMALL_MEMORY, extra);
    });
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c).append('\n');
    }
    return sb.toString();
  }

  /** A directory this process cannot create files in (read-only bits, or /proc for root). */
  private Path unwritableDir() throws IOException {
    Path ro = Files.createDirectories(base.resolve("read-only"));
    assertTrue(ro.toFile().setWritable(false, false));
    try {
      Files.delete(Files.createTempFile(ro, "probe", ""));
      // root ignores permission bits: use a file system that takes no files at all
      return Path.of("/proc");
    } catch (IOException expected) {
      return ro;
    }
  }

  private TieredShuffleBlockResolver resolver() {
    return ((TieredShuffleManager) SparkEnv.get().shuffleManager()).tieredResolver();
  }

  /** The shuffle files of one kind (any kind for null) in the data dirs now. */
  private List<Path> shuffleFiles(FileWatcher.Kind kind) {
    return Stream.of(data1, data2)
        .flatMap(d -> (kind == null ? FileWatcher.list(d) : FileWatcher.list(d, kind)).stream())
        .filter(p -> p.getFileName().toString().startsWith("shuffle_"))
        .collect(Collectors.toList());
  }

  private static final Pattern SHUFFLE_FILE = Pattern.compile("shuffle_(\\d+)_(\\d+)_0\\..*");

  /** shuffle id and map id of a shuffle file. */
  private static long[] ids(Path f) {
    Matcher m = SHUFFLE_FILE.matcher(f.getFileName().toString());
    assertTrue(m.matches(), f.toString());
    return new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2))};
  }

  private static void assertSubset(Set<String> allowed, Set<String> actual, String what) {
    assertTrue(allowed.containsAll(actual), what + ": " + actual + ", expected within " + allowed);
  }

  private static void assertContains(String haystack, String needle) {
    assertTrue(haystack.contains(needle), "expected «" + needle + "» in:\n" + haystack);
  }
}
