"""One store for every on-disk cache of the workflow: sqlite files whose values are checksummed and checked.

The embedding, score, LLM answer, translation and saliency caches (:mod:`posir.embedding_cache`,
:mod:`posir.scorers.cache`, :mod:`posir.llm.cache`, :mod:`posir.translate.cache`,
:mod:`posir.analyses.saliency`) are thin typed facades (:mod:`posir.cache_store.facade`) over :class:`CacheStore`
(:mod:`posir.cache_store.store`), which is the one place for:

* connection setup: WAL journal (readers never wait for a writer), ``synchronous=NORMAL`` (a power
  loss may lose the last commits, never corrupt the file) and a busy timeout, so parallel jobs
  share a file;
* locking: one connection per store behind a lock for the threads of a process; write
  transactions start with ``BEGIN IMMEDIATE`` so two processes writing at once queue on the
  busy timeout instead of failing on a lock upgrade;
* transactions: :meth:`CacheStore.put_many` commits a batch in one transaction,
  :meth:`CacheStore.put` one value at once (a streamed remote answer is kept the moment it
  arrives, so a killed job keeps what it finished);
* integrity: every row carries a CRC-32 of its key and value columns; every read verifies it and
  the table's value check (``Table.decode``; the declarations and checksums: :mod:`posir.cache_store.tables`). A
  row that fails either is counted (:attr:`CacheStore.counts`), logged with the file name, deleted from the file
  and treated as a miss, so it is recomputed and never used;
* the format: a meta table names the cache's kind and format version; files of the unversioned
  layout the caches wrote before are migrated on open, each value checked on the way
  (:mod:`posir.cache_store.file_format`);
* errors: every sqlite failure becomes a :class:`CacheError` whose message names the file, what is
  wrong and the fix (:mod:`posir.cache_store.errors`);
* the cache mode: ``single`` (the default: every process reads and writes the one file, on one host) or
  ``shards`` (jobs on several hosts: the file is only read, values go to shards, :mod:`posir.cache_store.shards`,
  that one process folds into it: :mod:`posir.cache_shards`).

sqlite rather than a key-value library: ``perf/cache_store_speed.py`` measured this layer against
``diskcache`` on the workflow's access pattern; ``docs/caches.md`` has the numbers and the reasons.
"""

from posir.cache_store.errors import (
    CacheBusyError,
    CacheDamagedError,
    CacheError,
    CachePathError,
    CacheReadOnlyError,
    NotACacheError,
)
from posir.cache_store.facade import CacheFacade, by_first, single_keys
from posir.cache_store.file_format import Migration
from posir.cache_store.shards import (
    CACHE_MODES,
    FLUSH_ROWS,
    FLUSH_S,
    HOST_VARIABLE,
    MODE_VARIABLE,
    SHARD_SUFFIX,
    TEMPORARY_PREFIX,
    ShardReader,
    cache_mode,
    complete_shards,
    read_only_uri,
    shard_dir,
    write_shard,
)
from posir.cache_store.store import CacheCounts, CacheStore
from posir.cache_store.tables import (
    META_TABLE,
    UNUSABLE_ROW,
    CacheKind,
    Decoder,
    Key,
    Table,
    Values,
    create_layout,
    first_value,
    row_checksum,
)

__all__ = [
    "CACHE_MODES",
    "FLUSH_ROWS",
    "FLUSH_S",
    "HOST_VARIABLE",
    "META_TABLE",
    "MODE_VARIABLE",
    "SHARD_SUFFIX",
    "TEMPORARY_PREFIX",
    "UNUSABLE_ROW",
    "CacheBusyError",
    "CacheCounts",
    "CacheDamagedError",
    "CacheError",
    "CacheFacade",
    "CacheKind",
    "CachePathError",
    "CacheReadOnlyError",
    "CacheStore",
    "Decoder",
    "Key",
    "Migration",
    "NotACacheError",
    "ShardReader",
    "Table",
    "Values",
    "by_first",
    "cache_mode",
    "complete_shards",
    "create_layout",
    "first_value",
    "read_only_uri",
    "row_checksum",
    "shard_dir",
    "single_keys",
    "write_shard",
]
