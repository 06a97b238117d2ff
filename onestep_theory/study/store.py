"""The results store of a finite-size study: one SQLite row per finished task, so nothing is lost.

A study (docs/theory/numerics.md §8) runs many tasks, one per (protocol, parameters, size d, seed index),
each possibly minutes long, on one machine or on a cluster. Every finished task is written at once, in its
own transaction, to a SQLite file. A study interrupted by Ctrl-C, a killed worker or a crashed machine
resumes where it stopped: the tasks already in the store are read back, never recomputed. A task is keyed
by :func:`task_key`, a SHA-256 hash of its protocol, parameters, size, seed index and the package
version, so results of another version are never mixed in (the rows also carry the version; the store
only shows rows of its own). A stored value keeps the digits it was measured with (the contract of
docs/theory/numerics.md §1): floats are written as JSON (shortest round-trip ``repr``), exact numbers
as their ``str``.

Durability: write-ahead log (``journal_mode=WAL``), ``synchronous=FULL`` (a commit survives a power
loss), ``INSERT OR IGNORE`` (a finished task is never overwritten nor duplicated). Several processes may
append at once: each write is one short transaction, and a writer waits up to 30 s for the lock. A file
that is not a store of this package, or of a newer schema, is refused with one
:class:`~onestep_theory.core.errors.InvalidParameterError` naming the path.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import math
import os
import sqlite3
import threading
import time
from urllib.parse import quote

from .. import __version__
from ..core.errors import InvalidParameterError, OnestepError, ResourceError

__all__ = ["SCHEMA", "ResultStore", "task_key", "canonical_json"]

#: Schema version written into ``meta``; a store of a newer schema is refused.
SCHEMA = 1
PACKAGE = "onestep_theory"
ALLOWED = f"an {PACKAGE} results store (SQLite, schema <= {SCHEMA})"

_TABLES = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE tasks(key TEXT PRIMARY KEY, protocol TEXT NOT NULL, params TEXT NOT NULL, d INTEGER NOT NULL,
                   seed_index INTEGER NOT NULL, version TEXT NOT NULL, result TEXT NOT NULL, seconds REAL,
                   created TEXT NOT NULL);
CREATE INDEX tasks_version ON tasks(version, protocol, d, seed_index);
"""
_COLUMNS = ("key", "protocol", "params", "d", "seed_index", "version", "result", "seconds", "created")


def _plain(obj):
    """``obj`` as plain JSON data: dict keys must be str, tuples become lists, numpy scalars and arrays
    become Python numbers and lists, floats stay floats, other numbers (Fraction, mpf, SymPy) become str."""
    if obj is None or isinstance(obj, (bool, str, int)):
        return obj
    if isinstance(obj, float):
        return float(obj)
    if isinstance(obj, dict):
        bad = [k for k in obj if not isinstance(k, str)]
        if bad:
            raise InvalidParameterError("key", bad[0], "a str (keys of parameters and results)")
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if type(obj).__module__ == "numpy" and hasattr(obj, "tolist"):
        return _plain(obj.tolist())
    return str(obj)


def canonical_json(obj) -> str:
    """Canonical JSON text of ``obj``: sorted keys, no whitespace, floats via ``repr``, exact values via ``str``.

    >>> canonical_json({"b": 0.1, "a": [1, (2, 3)], "c": None})
    '{"a":[1,[2,3]],"b":0.1,"c":null}'
    """
    return json.dumps(_plain(obj), sort_keys=True, separators=(",", ":"))


def _check_task(protocol, params, d, seed_index):
    if not isinstance(protocol, str) or not protocol:
        raise InvalidParameterError("protocol", protocol, "a non-empty str")
    if not isinstance(params, dict):
        raise InvalidParameterError("params", params, "a dict of parameters")
    if isinstance(d, bool) or not isinstance(d, int) or d < 1:
        raise InvalidParameterError("d", d, "an int >= 1")
    if isinstance(seed_index, bool) or not isinstance(seed_index, int) or seed_index < 0:
        raise InvalidParameterError("seed_index", seed_index, "an int >= 0")


#: Claims of tasks being run (``ResultStore.claim``); not part of the schema version (additive).
_CLAIMS = "CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY, owner TEXT NOT NULL, since REAL NOT NULL)"
#: A claim from another machine older than this (seconds) is taken over: its process is presumed gone.
STALE_AFTER = 6 * 3600.0


def claim_owner() -> str:
    """This process as a claim owner: ``host:pid:random`` (a new value per run)."""
    import secrets
    import socket

    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def claim_is_stale(owner: str, since: float) -> bool:
    """Whether a claim's process is gone: on this machine, its pid no longer exists; elsewhere, the claim is older
    than :data:`STALE_AFTER`."""
    import socket

    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host == socket.gethostname() and pid.isdigit():
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False
    try:
        return not time.time() - float(since) <= STALE_AFTER        # an unreadable time: stale
    except (TypeError, ValueError):
        return True


def task_key(protocol: str, params: dict, d: int, seed_index: int, version: str = __version__) -> str:
    """SHA-256 hex digest of the canonical JSON of (protocol, params, d, seed_index, version).

    The order of ``params`` is irrelevant; any change of a field, including the version, changes the key.

    >>> task_key("srf", {"alpha": 3.0, "lam": 0.1}, 500, 0) == task_key("srf", {"lam": 0.1, "alpha": 3.0}, 500, 0)
    True
    """
    _check_task(protocol, params, d, seed_index)
    text = canonical_json({"protocol": protocol, "params": params, "d": d, "seed_index": seed_index,
                           "version": str(version)})
    return hashlib.sha256(text.encode()).hexdigest()


class ResultStore:
    """A study's results on disk (SQLite): ``put`` once per finished task, ``has``/``done_keys`` to resume.

    Parameters
    ----------
    path : str or os.PathLike
        The store file; created when missing (unless ``create=False``). ``":memory:"`` keeps the rows in
        memory only (a study that need not survive its process).
    version : str
        The package version whose rows this store writes and shows (default: the running version).
    create : bool
        Create a new store when ``path`` does not exist or is empty; when False, refuse instead.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "study.sqlite")
    >>> with ResultStore(path) as st:
    ...     st.put("srf", {"alpha": 3.0}, 500, 0, {"mse": 0.25}, seconds=1.5)
    ...     st.put("srf", {"alpha": 3.0}, 500, 0, {"mse": 9.0}, seconds=1.5)   # never overwritten
    ...     st.get("srf", {"alpha": 3.0}, 500, 0), st.count()
    True
    False
    ({'mse': 0.25}, 1)
    """

    def __init__(self, path, *, version: str = __version__, create: bool = True):
        self.path = os.fspath(path)
        self.version = str(version)
        self._lock = threading.RLock()      # reentrant: a claim's transaction reads through _query
        if not create and (not os.path.isfile(self.path) or os.path.getsize(self.path) == 0):
            raise InvalidParameterError("store", self.path, ALLOWED, "no such file, or an empty one")
        if self.path != ":memory:" and os.path.isfile(self.path) and os.path.getsize(self.path) > 0:
            with open(self.path, "rb") as fh:          # never let SQLite turn a foreign file into a database
                if fh.read(16) != b"SQLite format 3\x00":
                    raise InvalidParameterError("store", self.path, ALLOWED, "not a SQLite database (left unchanged)")
        full = os.path.abspath(self.path)     # a reader that cannot write it (read-only file or mount): a snapshot
        self._ro = not create and not (os.access(full, os.W_OK) and os.access(os.path.dirname(full), os.W_OK))
        try:
            self._con = sqlite3.connect(f"file:{quote(full)}?mode=ro&immutable=1" if self._ro else self.path,
                                        uri=self._ro, timeout=30, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise InvalidParameterError("store", self.path, ALLOWED, f"cannot open: {exc}") from None
        try:
            problem = self._setup()
        except (sqlite3.Error, OSError) as exc:
            if isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc)):
                self._con.close()
                raise self._failure(exc) from None      # held by another process past the 30 s timeout: exit 3
            problem = f"{'not a SQLite database' if 'not a database' in str(exc) else 'unreadable'}: {exc}"
        if problem:
            self._con.close()
            raise InvalidParameterError("store", self.path, ALLOWED, problem)

    def _setup(self):
        """Create the tables of a new store; return why an existing file is not a store (None if it is one)."""
        con = self._con
        con.execute("BEGIN" if self._ro else "BEGIN IMMEDIATE")     # one creator at a time; the others see the tables
        try:
            names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not names and (self.path == ":memory:" or os.path.getsize(self.path) == 0):
                for stmt in filter(str.strip, _TABLES.split(";")):
                    con.execute(stmt)
                con.executemany("INSERT INTO meta VALUES (?, ?)", [("schema", str(SCHEMA)), ("package", PACKAGE)])
                names = {"meta", "tasks"}
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise
        if "meta" not in names:
            return "not a results store: no table 'meta'"
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        schema = meta.get("schema")
        if meta.get("package") != PACKAGE:
            return f"a store of package {meta.get('package')!r}, not {PACKAGE!r}"
        if not (isinstance(schema, str) and schema.isascii() and schema.isdigit()):
            return f"no valid schema version in table 'meta' (found {schema!r})"
        if int(schema) > SCHEMA:
            return f"schema {schema} is newer than this version of {PACKAGE} reads ({SCHEMA}); upgrade"
        if int(schema) < 1 or "tasks" not in names:
            return f"schema {schema} without a valid table 'tasks'"
        if self._ro:
            return None                 # a snapshot: no pragma, no claims table written
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=FULL")
        con.execute(_CLAIMS)       # additive: stores written before claims existed gain the table, readers ignore it
        return None

    # ------------------------------------------------------------------ claims (concurrent runs of one study)
    def claim(self, key: str, owner: str) -> bool:
        """Claim the task ``key`` for ``owner`` (one process of a study): True if it is now ``owner``'s to run —
        unclaimed, already ``owner``'s, or claimed by a process that is gone (:func:`claim_is_stale`); False if
        it is stored or another live process runs it.  Two runs of one study on one store thus split the tasks."""
        with self._transaction() as con:
            stored = self._stored(key) is not None       # the same test as get: a row of this version
            row = con.execute("SELECT owner, since FROM claims WHERE key = ?", (key,)).fetchone()
            mine = not stored and (row is None or row[0] == owner or claim_is_stale(*row))
            if mine:
                con.execute("INSERT OR REPLACE INTO claims VALUES (?, ?, ?)", (key, owner, time.time()))
        return mine

    def release(self, owner: str) -> None:
        """Drop every claim of ``owner`` (at the end of its run, finished or not)."""
        with self._transaction() as con:
            con.execute("DELETE FROM claims WHERE owner = ?", (owner,))

    @contextlib.contextmanager
    def _transaction(self):
        """One write transaction under the lock, rolled back on any error; SQLite errors as one line."""
        with self._lock:
            try:
                self._con.execute("BEGIN IMMEDIATE")
                yield self._con
                self._con.execute("COMMIT")
            except BaseException as exc:
                if self._con.in_transaction:
                    self._con.execute("ROLLBACK")
                if isinstance(exc, sqlite3.DatabaseError):
                    raise self._failure(exc) from None
                raise

    # ------------------------------------------------------------------ context manager
    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            self._con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"ResultStore({self.path!r}, version={self.version!r})"

    # ------------------------------------------------------------------ writing and reading
    def key(self, protocol: str, params: dict, d: int, seed_index: int) -> str:
        """The :func:`task_key` of a task under this store's version."""
        return task_key(protocol, params, d, seed_index, self.version)

    def put(self, protocol: str, params: dict, d: int, seed_index: int, result: dict, seconds: float) -> bool:
        """Store a finished task in one transaction; True if inserted, False if it was already stored
        (the stored row is kept, never overwritten)."""
        key = self.key(protocol, params, d, seed_index)
        if not isinstance(result, dict):
            raise InvalidParameterError("result", result, "a dict")
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds < math.inf:
            raise InvalidParameterError("seconds", seconds, "a finite float >= 0")
        row = (key, protocol, canonical_json(params), d, seed_index, self.version, canonical_json(result),
               float(seconds),
               datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds"))
        with self._transaction() as con:
            cur = con.execute(f"INSERT OR IGNORE INTO tasks VALUES ({', '.join('?' * len(row))})", row)
            con.execute("DELETE FROM claims WHERE key = ?", (key,))
        return cur.rowcount == 1

    def _failure(self, exc):
        """A SQLite error as one line: a lock held past the 30 s timeout is a resource failure (exit 3), anything
        else a damaged store (exit 2)."""
        if "locked" in str(exc) or "busy" in str(exc):
            return ResourceError(f"store {self.path}: locked by another process for more than 30 s ({exc})")
        return InvalidParameterError("store", self.path, ALLOWED, f"damaged: {exc}")

    def _query(self, sql, args=()):
        with self._lock:
            try:
                return self._con.execute(sql, args).fetchall()
            except sqlite3.DatabaseError as exc:
                raise self._failure(exc) from None

    def _stored(self, key: str) -> dict | None:
        """The stored result under ``key``, checked (rows of this version that hash back to ``key`` from their own
        columns, agree and hold a JSON object; an edited or truncated row is refused with one line, never half-read):
        the one test of "stored" for :meth:`get`, :meth:`has` and :meth:`claim`."""
        rows = self._query("SELECT protocol, params, d, seed_index, version, result FROM tasks WHERE key = ?", (key,))
        if not rows:
            return None
        problem = None
        try:
            own = [task_key(r[0], json.loads(r[1]), r[2], r[3], r[4]) == key for r in rows]
            result = json.loads(rows[0][5])
        except (TypeError, ValueError, OnestepError):
            own, result = [False], None
        if any(r[4] != self.version for r in rows):
            problem = (f"its version column says {rows[0][4]!r}, but its key is of version {self.version!r} (an "
                       "edited copy?)")
        elif not all(own) or not isinstance(result, dict):
            problem = "its columns do not hash to its key, or its result is not a JSON object (truncated or edited)"
        elif len({r[5] for r in rows}) > 1:
            problem = f"{len(rows)} rows with one key and different results"
        if problem:
            raise InvalidParameterError("store", self.path, "a store whose rows match their keys",
                                        f"task {key[:12]}: {problem}; `store ls --all-versions` shows the rows; "
                                        "use a new store")
        return result

    def get(self, protocol: str, params: dict, d: int, seed_index: int) -> dict | None:
        """The stored result of a task (this version), or None."""
        return self._stored(self.key(protocol, params, d, seed_index))

    def has(self, protocol: str, params: dict, d: int, seed_index: int) -> bool:
        """Whether the task is stored (this version)."""
        return self.get(protocol, params, d, seed_index) is not None

    def done_keys(self) -> set:
        """The keys of every stored task of this version (compare with :meth:`key` to resume)."""
        return {r[0] for r in self._query("SELECT key FROM tasks WHERE version = ?", (self.version,))}

    def _where(self, protocol, all_versions):
        conds, args = [], []
        if not all_versions:
            conds, args = ["version = ?"], [self.version]
        if protocol is not None:
            conds.append("protocol = ?")
            args.append(protocol)
        return (" WHERE " + " AND ".join(conds) if conds else ""), args

    def count(self, protocol: str | None = None, *, all_versions: bool = False) -> int:
        """Number of stored tasks (of this version unless ``all_versions``)."""
        where, args = self._where(protocol, all_versions)
        return self._query("SELECT COUNT(*) FROM tasks" + where, args)[0][0]

    def rows(self, protocol: str | None = None, *, all_versions: bool = False) -> list:
        """Stored tasks as dicts (``params`` and ``result`` parsed), ordered by version, protocol, d, seed index."""
        where, args = self._where(protocol, all_versions)
        sql = f"SELECT {', '.join(_COLUMNS)} FROM tasks{where} ORDER BY version, protocol, d, seed_index, key"
        out = []
        for values in self._query(sql, args):
            row = dict(zip(_COLUMNS, values))
            row["params"], row["result"] = json.loads(row["params"]), json.loads(row["result"])
            out.append(row)
        return out

    # ------------------------------------------------------------------ export
    def export(self, path_or_buffer, fmt: str = "csv", *, protocol: str | None = None,
               all_versions: bool = False, context: dict | None = None) -> int:
        """Write the rows to a file or text buffer; return the number of rows.

        ``fmt="json"`` writes the list of :meth:`rows`. ``fmt="csv"`` writes one line per task with the
        columns key, protocol, params (canonical JSON), d, seed_index, version, seconds, created, then one
        column ``result.<name>`` per result entry (scalars as they are, lists and dicts as JSON text), after ``#``
        lines of context (the store, the selection, the version; ``context``, the command line's, added; read back
        with ``core.results.read_csv``).  The JSON rows carry their own params and version.
        """
        if fmt not in ("csv", "json"):
            raise InvalidParameterError("fmt", fmt, "'csv' or 'json'")
        rows = self.rows(protocol, all_versions=all_versions)
        ctx = {"command": f"ResultStore({os.path.basename(self.path)!r}).export({fmt!r}, protocol={protocol!r}, "
                          f"all_versions={all_versions})", "method": "the stored tasks of " + ("every version" if
                                                                all_versions else "version " + self.version),
               **{k: v for k, v in (context or {}).items() if v}}
        if isinstance(path_or_buffer, (str, os.PathLike)):
            with open(path_or_buffer, "w", newline="", encoding="utf-8") as fh:
                return self._write(fh, rows, fmt, ctx)
        return self._write(path_or_buffer, rows, fmt, ctx)

    @staticmethod
    def _write(fh, rows, fmt, ctx):
        from ..core.results import write_csv

        if fmt == "json":
            fh.write(json.dumps(rows, indent=1) + "\n")
            return len(rows)
        names = sorted({n for r in rows for n in r["result"]})
        head = [c for c in _COLUMNS if c != "result"] + [f"result.{n}" for n in names]
        table = []
        for r in rows:
            res = r["result"]
            cells = {c: canonical_json(r[c]) if c == "params" else r[c] for c in _COLUMNS if c != "result"}
            for n in names:
                v = res.get(n)
                cells[f"result.{n}"] = canonical_json(v) if isinstance(v, (list, dict)) else "" if v is None else v
            table.append(cells)
        write_csv(fh, table, ctx, head)
        return len(rows)
