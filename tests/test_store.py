"""The results store of a study (onestep_theory.study.store): round trip, keys, versions, refusal of foreign
files, several writers at once, and a write killed before its commit."""

import fractions
import hashlib
import io
import json
import math
import multiprocessing
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import onestep_theory
from onestep_theory.core.results import read_csv
from onestep_theory.core.errors import InvalidParameterError
from onestep_theory.study.store import SCHEMA, ResultStore, canonical_json, task_key

P = {"alpha": 3.0, "lam": 0.1, "student": "tanh"}


@pytest.fixture
def path(tmp_path):
    return tmp_path / "study.sqlite"


# ---------------------------------------------------------------- round trip
def test_round_trip_and_layout(path):
    result = {"mse": 0.1 + 0.2, "se": 1e-300, "curve": [1.5, [2, 3]], "name": "x", "none": None,
              "exact": fractions.Fraction(1, 3), "n": np.int64(7), "v": np.array([0.25, 0.5])}
    with ResultStore(path) as st:
        assert st.count() == 0 and st.get("net", P, 500, 0) is None and not st.has("net", P, 500, 0)
        assert st.put("net", P, 500, 0, result, seconds=2.5) is True
        got = st.get("net", P, 500, 0)
        assert st.has("net", P, 500, 0) and st.count() == 1
        assert st.done_keys() == {task_key("net", P, 500, 0)}
    assert got["mse"] == 0.1 + 0.2 and got["se"] == 1e-300          # every bit of a float is kept
    assert got["curve"] == [1.5, [2, 3]] and got["name"] == "x" and got["none"] is None
    assert got["exact"] == "1/3" and got["n"] == 7 and got["v"] == [0.25, 0.5]
    with ResultStore(path) as st:                                     # reopened: still there
        (row,) = st.rows()
        assert row["params"] == P and row["d"] == 500 and row["seed_index"] == 0 and row["seconds"] == 2.5
        assert row["version"] == onestep_theory.__version__ and row["result"] == got
        assert row["created"].endswith("+00:00")
    con = sqlite3.connect(path)                                       # the documented layout, read independently
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert dict(con.execute("SELECT key, value FROM meta")) == {"schema": str(SCHEMA), "package": "onestep_theory"}
    assert [c[1] for c in con.execute("PRAGMA table_info(tasks)")] == [
        "key", "protocol", "params", "d", "seed_index", "version", "result", "seconds", "created"]
    assert con.execute("SELECT params FROM tasks").fetchone()[0] == '{"alpha":3.0,"lam":0.1,"student":"tanh"}'
    con.close()


def test_nan_and_infinite_results_round_trip(path):
    with ResultStore(path) as st:
        st.put("net", P, 500, 0, {"a": math.nan, "b": -math.inf}, 0.0)
        got = st.get("net", P, 500, 0)
    assert math.isnan(got["a"]) and got["b"] == -math.inf


def test_insert_or_ignore_never_overwrites(path):
    with ResultStore(path) as st:
        assert st.put("net", P, 500, 0, {"mse": 1.0}, 1.0)
        assert not st.put("net", P, 500, 0, {"mse": 2.0}, 9.0)
        assert not st.put("net", dict(reversed(list(P.items()))), 500, 0, {"mse": 3.0}, 9.0)
        assert st.count() == 1 and st.get("net", P, 500, 0) == {"mse": 1.0} and st.rows()[0]["seconds"] == 1.0


def test_in_memory_store():
    with ResultStore(":memory:") as st:
        assert st.put("net", P, 5, 0, {"mse": 1.0}, 0.0) and st.get("net", P, 5, 0) == {"mse": 1.0}


def test_threads_share_one_store(path):
    with ResultStore(path) as st, ThreadPoolExecutor(4) as pool:
        inserted = list(pool.map(lambda i: st.put("net", P, 100, i % 50, {"i": i % 50}, 0.0), range(200)))
        assert sum(inserted) == 50 and st.count() == 50


# ---------------------------------------------------------------- keys
def test_key_is_sha256_of_the_documented_canonical_json():
    text = '{"d":500,"params":{"alpha":3.0,"lam":0.1,"student":"tanh"},"protocol":"net","seed_index":2,"version":"9.1"}'
    assert task_key("net", P, 500, 2, "9.1") == hashlib.sha256(text.encode()).hexdigest()
    assert canonical_json({"x": fractions.Fraction(2, 3), "y": (1, 2)}) == '{"x":"2/3","y":[1,2]}'


def test_key_determinism_and_sensitivity():
    base = task_key("net", P, 500, 0, "1.0")
    assert base == task_key("net", {"student": "tanh", "lam": 0.1, "alpha": 3.0}, 500, 0, "1.0")
    assert base == task_key("net", {"alpha": np.float64(3.0), "lam": 0.1, "student": "tanh"}, 500, 0, "1.0")
    changed = [task_key("srf", P, 500, 0, "1.0"), task_key("net", {**P, "lam": 0.1 + 2**-56}, 500, 0, "1.0"),
               task_key("net", {**P, "beta": 1.0}, 500, 0, "1.0"),
               task_key("net", {**P, "student": "sin"}, 500, 0, "1.0"),
               task_key("net", P, 1000, 0, "1.0"), task_key("net", P, 500, 1, "1.0"), task_key("net", P, 500, 0, "1.1")]
    assert len({base, *changed}) == len(changed) + 1
    assert task_key("net", P, 500, 0) == task_key("net", P, 500, 0, onestep_theory.__version__) != base


@pytest.mark.parametrize("args", [("", P, 5, 0), ("net", [1], 5, 0), ("net", P, 0, 0), ("net", P, 5.0, 0),
                                  ("net", P, True, 0), ("net", P, 5, -1), ("net", {1: 2}, 5, 0)])
def test_bad_task_fields_are_refused(args):
    with pytest.raises(InvalidParameterError):
        task_key(*args)


def test_bad_result_or_seconds_refused(path):
    with ResultStore(path) as st:
        for result, seconds in [([1.0], 1.0), ({"a": 1}, -1.0), ({"a": 1}, math.nan), ({"a": 1}, "soon")]:
            with pytest.raises(InvalidParameterError):
                st.put("net", P, 5, 0, result, seconds)
        assert st.count(all_versions=True) == 0


# ---------------------------------------------------------------- versions
def test_rows_of_another_version_are_invisible(path):
    with ResultStore(path, version="0.1.0") as old:
        old.put("net", P, 500, 0, {"mse": 1.0}, 1.0)
        old.put("srf", P, 500, 0, {"mse": 1.5}, 1.0)
    with ResultStore(path, version="0.2.0") as new:
        assert new.get("net", P, 500, 0) is None and not new.has("net", P, 500, 0)
        assert new.done_keys() == set() and new.rows() == [] and new.count() == 0
        assert new.count(all_versions=True) == 2 and {r["version"] for r in new.rows(all_versions=True)} == {"0.1.0"}
        assert new.put("net", P, 500, 0, {"mse": 2.0}, 1.0)           # recomputed under the new version
        assert new.get("net", P, 500, 0) == {"mse": 2.0} and new.count() == 1
        assert [r["protocol"] for r in new.rows("srf", all_versions=True)] == ["srf"]
    with ResultStore(path, version="0.1.0") as old:
        assert old.get("net", P, 500, 0) == {"mse": 1.0} and old.count() == 2 and old.count("net") == 1


# ---------------------------------------------------------------- foreign and corrupt files
def _sqlite(path, *statements):
    con = sqlite3.connect(path)
    for s in statements:
        con.execute(s)
    con.commit()
    con.close()


FOREIGN = {
    "random bytes": lambda p: p.write_bytes(random.Random(0).randbytes(8192)),
    "text": lambda p: p.write_text("mse,d\n0.1,500\n"),
    "table-less": lambda p: _sqlite(p, "PRAGMA user_version = 3"),
    "other tables": lambda p: _sqlite(p, "CREATE TABLE foo(x)", "INSERT INTO foo VALUES (1)"),
    "other package": lambda p: _sqlite(p, "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)",
                                       "CREATE TABLE tasks(key TEXT)",
                                       "INSERT INTO meta VALUES ('schema', '1'), ('package', 'other')"),
    "no schema": lambda p: _sqlite(p, "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)",
                                   "INSERT INTO meta VALUES ('package', 'onestep_theory')"),
    "bad schema": lambda p: _sqlite(p, "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)",
                                    "INSERT INTO meta VALUES ('package', 'onestep_theory'), ('schema', 'one')"),
    "newer schema": lambda p: _sqlite(p, "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)",
                                      "INSERT INTO meta VALUES ('package', 'onestep_theory'), ('schema', '2')"),
    "no tasks table": lambda p: _sqlite(p, "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)",
                                        "INSERT INTO meta VALUES ('package', 'onestep_theory'), ('schema', '1')"),
}
REASON = {"random bytes": "not a SQLite database", "text": "not a SQLite database", "table-less": "no table 'meta'",
          "other tables": "no table 'meta'", "other package": "'other'", "no schema": "no valid schema",
          "bad schema": "no valid schema", "newer schema": "newer", "no tasks table": "table 'tasks'"}


@pytest.mark.parametrize("kind", FOREIGN)
def test_foreign_or_corrupt_file_is_refused_untouched(tmp_path, kind):
    p = tmp_path / "foreign.db"
    FOREIGN[kind](p)
    before = p.read_bytes()
    assert before                                                      # a non-empty file, not a fresh one
    with pytest.raises(InvalidParameterError) as info:
        ResultStore(p)
    msg = str(info.value)
    assert str(p) in msg and REASON[kind] in msg and "\n" not in msg, msg
    assert info.value.param == "store" and info.value.__cause__ is None
    assert info.value.__context__ is None or info.value.__suppress_context__    # no sqlite3 traceback attached
    assert p.read_bytes() == before                                    # a refused file is never written


def test_missing_or_unopenable_path_refused(tmp_path):
    with pytest.raises(InvalidParameterError, match="no such file"):
        ResultStore(tmp_path / "absent.sqlite", create=False)
    assert not (tmp_path / "absent.sqlite").exists()
    for p in (tmp_path, tmp_path / "no" / "dir.sqlite"):
        with pytest.raises(InvalidParameterError, match=str(p)):
            ResultStore(p)


# ---------------------------------------------------------------- several processes
def _writer(path, wid, barrier, out):
    try:
        barrier.wait()                                                 # all open the (not yet created) store at once
        with ResultStore(path) as st:
            own = sum(st.put("net", {"worker": wid}, 100, i, {"i": i, "worker": wid}, 0.0) for i in range(50))
            shared = sum(st.put("net", {"worker": "any"}, 100, i, {"by": wid}, 0.0) for i in range(5))
        out.put((wid, own, shared))
    except BaseException as exc:        # reported, not lost: the test then names it instead of waiting for it
        out.put((wid, "error", f"{type(exc).__name__}: {exc}"))
        raise


def test_concurrent_writers_lose_nothing(path):
    # Fresh processes, as with "spawn" (nothing inherited from this process, no SQLite handle copied by a fork),
    # but the package is imported once in the fork server rather than once per child (~2 s each under spawn).
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(["onestep_theory.study.store"])
    barrier, out = ctx.Barrier(4), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(str(path), w, barrier, out)) for w in range(4)]
    for pr in procs:
        pr.start()
    reports = [out.get(timeout=120) for _ in procs]
    assert not [r for r in reports if r[1] == "error"], reports
    for pr in procs:
        pr.join(60)
        assert pr.exitcode == 0
    assert sorted(r[1] for r in reports) == [50] * 4 and sum(r[2] for r in reports) == 5
    with ResultStore(path) as st:
        rows = st.rows()
        assert st.count() == 205 and len(st.done_keys()) == 205
    own = {(r["params"]["worker"], r["seed_index"]) for r in rows if r["params"]["worker"] != "any"}
    assert own == {(w, i) for w in range(4) for i in range(50)}
    assert all(r["result"] == {"i": r["seed_index"], "worker": r["params"]["worker"]}
               for r in rows if r["params"]["worker"] != "any")


# ---------------------------------------------------------------- a write killed before its commit
KILLED = textwrap.dedent("""
    import sqlite3, sys, time
    con = sqlite3.connect(sys.argv[1], isolation_level=None)
    con.execute("PRAGMA cache_size = 1")                   # spill the uncommitted pages into the WAL
    con.execute("BEGIN IMMEDIATE")
    for i in range(2000):
        con.execute("INSERT INTO tasks VALUES (?, 'net', '{}', 100, ?, ?, ?, 0.0, 'now')",
                    ("partial%d" % i, i, sys.argv[2], "x" * 500))
    print("inside", flush=True)
    time.sleep(60)
""")


def test_write_killed_before_commit_leaves_a_readable_store(path):
    with ResultStore(path) as st:
        st.put("net", P, 100, 0, {"mse": 1.0}, 1.0)
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(path), onestep_theory.__version__],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "inside"
        assert os.path.getsize(f"{path}-wal") > 2000 * 500                 # uncommitted frames on disk
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    with ResultStore(path) as st:
        assert st.count(all_versions=True) == 1 and st.get("net", P, 100, 0) == {"mse": 1.0}
        assert st.put("net", P, 100, 1, {"mse": 2.0}, 1.0)                # the lock died with the writer
        assert st.count() == 2
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("SELECT COUNT(*) FROM tasks WHERE key LIKE 'partial%'").fetchone()[0] == 0
    con.close()


# ---------------------------------------------------------------- export
@pytest.fixture
def filled(path):
    st = ResultStore(path)
    st.put("net", P, 1000, 0, {"mse": 0.1 + 0.2, "curve": [1, 2]}, 1.25)
    st.put("net", P, 500, 1, {"mse": 0.5, "note": "ok"}, 2.0)
    st.put("srf", {"alpha": 3.0}, 500, 0, {"mse": 0.75, "skipped": None}, 0.5)
    yield st
    st.close()


def test_csv_export(filled, tmp_path):
    assert filled.export(tmp_path / "out.csv") == 3
    text = (tmp_path / "out.csv").read_text()
    buf = io.StringIO()
    filled.export(buf, "csv")
    assert buf.getvalue() == text
    context, lines = read_csv(io.StringIO(text))          # the "#" lines first: the context
    assert context["method"] == f"the stored tasks of version {onestep_theory.__version__}"
    assert list(lines[0]) == ["key", "protocol", "params", "d", "seed_index", "version", "seconds", "created",
                              "result.curve", "result.mse", "result.note", "result.skipped"]
    assert [(r["protocol"], r["d"], r["seed_index"]) for r in lines] == [("net", "500", "1"), ("net", "1000", "0"),
                                                                         ("srf", "500", "0")]
    net500, net1000, srf = lines
    assert float(net1000["result.mse"]) == 0.1 + 0.2 and json.loads(net1000["result.curve"]) == [1, 2]
    assert net500["result.note"] == "ok" and net500["result.curve"] == "" and net500["seconds"] == "2.0"
    assert srf["result.skipped"] == "" and json.loads(srf["params"]) == {"alpha": 3.0}
    assert net500["key"] == task_key("net", P, 500, 1) and net500["version"] == onestep_theory.__version__
    buf = io.StringIO()
    assert filled.export(buf, "csv", protocol="srf") == 1
    assert [r["protocol"] for r in read_csv(io.StringIO(buf.getvalue()))[1]] == ["srf"]


def test_json_export(filled, tmp_path):
    filled.export(tmp_path / "out.json", fmt="json")
    data = json.loads((tmp_path / "out.json").read_text())
    assert data == filled.rows() and len(data) == 3
    assert data[1]["result"] == {"mse": 0.1 + 0.2, "curve": [1, 2]} and data[1]["params"] == P
    with pytest.raises(InvalidParameterError):
        filled.export(io.StringIO(), fmt="xml")
