package dev.strata.spark.shuffle;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * Watches directory trees while a job runs and records, for each kind of file Spark writes, the
 * trees it was created in. It uses the file system's change notifications (inotify on Linux),
 * so that spill and temp files that live for a few milliseconds are seen as well; a directory
 * that appears is watched at once and listed, for files created before it was watched.
 */
final class FileWatcher implements AutoCloseable {

  /** The kinds of files, by name. */
  enum Kind {
    DATA, INDEX, CHECKSUM, FINAL_TEMP, TEMP_SHUFFLE, TEMP_LOCAL, OTHER;

    static Kind of(String name) {
      if (name.startsWith("temp_shuffle_")) {
        return TEMP_SHUFFLE;
      }
      if (name.startsWith("temp_local_")) {
        return TEMP_LOCAL;
      }
      if (name.startsWith("shuffle_")) {
        if (name.endsWith(".data")) {
          return DATA;
        }
        if (name.endsWith(".index")) {
          return INDEX;
        }
        if (name.matches("shuffle_.*\\.checksum\\.[A-Za-z0-9]+")) {
          return CHECKSUM;
        }
        // shuffle_<s>_<m>_0.data.<uuid> and friends: a final file being written
        return FINAL_TEMP;
      }
      return OTHER;
    }
  }

  private final Map<String, Path> trees;
  private final Map<Kind, Set<String>> seen = new ConcurrentHashMap<>();
  private final Map<String, Set<String>> files = new ConcurrentHashMap<>();
  private final Map<WatchKey, String> keys = new ConcurrentHashMap<>();
  private final WatchService service;
  private final Thread thread;
  private volatile boolean running = true;
  private volatile boolean overflowed;
  private final AtomicInteger events = new AtomicInteger();

  /** @param trees the trees to watch, by a name used in reports */
  FileWatcher(Map<String, Path> trees) {
    this.trees = new TreeMap<>(trees);
    try {
      service = FileSystems.getDefault().newWatchService();
      for (Map.Entry<String, Path> t : this.trees.entrySet()) {
        files.put(t.getKey(), ConcurrentHashMap.newKeySet());
        watchTree(t.getKey(), t.getValue());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    thread = new Thread(this::run, "file-watcher");
    thread.setDaemon(true);
    thread.start();
  }

  /** Watches dir and every directory below it, and records the files already there. */
  private void watchTree(String tree, Path dir) {
    try (Stream<Path> s = Files.walk(dir)) {
      s.forEach(p -> {
        if (Files.isDirectory(p)) {
          try {
            keys.put(p.register(service, StandardWatchEventKinds.ENTRY_CREATE), tree);
          } catch (NoSuchFileException e) {
            // gone already
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        } else {
          record(tree, p);
        }
      });
    } catch (NoSuchFileException e) {
      // gone already
    } catch (UncheckedIOException e) {
      if (!(e.getCause() instanceof NoSuchFileException)) {
        throw e;
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void record(String tree, Path file) {
    String name = file.getFileName().toString();
    seen.computeIfAbsent(Kind.of(name), k -> ConcurrentHashMap.newKeySet()).add(tree);
    files.get(tree).add(trees.get(tree).relativize(file).toString());
  }

  private void run() {
    while (running) {
      WatchKey key;
      try {
        key = service.poll(10, TimeUnit.MILLISECONDS);
      } catch (InterruptedException | ClosedWatchServiceException e) {
        return;
      }
      if (key != null) {
        handle(key);
      }
    }
  }

  private void handle(WatchKey key) {
    String tree = keys.get(key);
    Path dir = (Path) key.watchable();
    for (WatchEvent<?> ev : key.pollEvents()) {
      if (ev.kind() == StandardWatchEventKinds.OVERFLOW) {
        overflowed = true;
        continue;
      }
      events.incrementAndGet();
      Path p = dir.resolve((Path) ev.context());
      if (Files.isDirectory(p)) {
        watchTree(tree, p);
      } else {
        record(tree, p);
      }
    }
    key.reset();
  }

  /** Stops watching, after handling what is pending. */
  void stop() {
    if (!running) {
      return;
    }
    running = false;
    try {
      thread.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    WatchKey key;
    while ((key = service.poll()) != null) {
      handle(key);
    }
    try {
      service.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    stop();
  }

  /** The names of the trees a kind of file was created in. */
  Set<String> treesWith(Kind kind) {
    return new TreeSet<>(seen.getOrDefault(kind, Set.of()));
  }

  /** Every kind of file seen, with the trees it was seen in. */
  Map<Kind, Set<String>> kindsSeen() {
    Map<Kind, Set<String>> out = new TreeMap<>();
    seen.forEach((k, v) -> out.put(k, new TreeSet<>(v)));
    return out;
  }

  /** Files were created faster than the notifications could tell (some may be missing). */
  boolean overflowed() {
    return overflowed;
  }

  /** How many creations were notified. */
  int events() {
    return events.get();
  }

  /** Every file ever seen in a tree, relative to it. */
  Set<String> filesSeenIn(String tree) {
    return new TreeSet<>(files.get(tree));
  }

  /** The regular files under a tree now (none if it does not exist). */
  static List<Path> list(Path root) {
    List<Path> out = new ArrayList<>();
    try (Stream<Path> s = Files.walk(root)) {
      s.filter(p -> Files.isRegularFile(p)).forEach(out::add);
    } catch (NoSuchFileException e) {
      // not yet created, or deleted while listing
    } catch (UncheckedIOException e) {
      if (!(e.getCause() instanceof NoSuchFileException)) {
        throw e;
      }
      // a file vanished while listing: a partial listing is fine, the next one follows
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  /** The regular files under a tree now whose name is of one kind. */
  static List<Path> list(Path root, Kind kind) {
    List<Path> out = new ArrayList<>();
    for (Path p : list(root)) {
      if (Kind.of(p.getFileName().toString()) == kind) {
        out.add(p);
      }
    }
    return out;
  }
}
