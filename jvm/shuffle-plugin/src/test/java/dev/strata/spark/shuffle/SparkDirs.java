package dev.strata.spark.shuffle;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the plugin's Spark tests share: a fresh spark.local.dir and two data dirs for each test,
 * and the session the test started, stopped after it.
 */
abstract class SparkDirs {

  @TempDir Path base;
  Path local;
  Path data1;
  Path data2;
  SparkSession spark;

  @BeforeEach
  void dirs() throws IOException {
    local = Files.createDirectories(base.resolve("local"));
    data1 = Files.createDirectories(base.resolve("data1"));
    data2 = Files.createDirectories(base.resolve("data2"));
  }

  @AfterEach
  void stop() {
    Jobs.stop(spark);
    spark = null;
  }
}
