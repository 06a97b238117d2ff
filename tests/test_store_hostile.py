"""Tampered stores (issue 31): `study --resume` on any store the tests can make finishes or exits with one line, in
bounded time.  The bug: a copied store whose `version` column was rewritten made ResultStore.claim see the tasks as
stored (key only) while get did not (key and version), and the run waited for them forever."""

import shutil
import socket
import sqlite3
import time

import pytest

from onestep_theory import InvalidParameterError
from onestep_theory.cli.main import main
from onestep_theory.core.errors import ResourceError
from onestep_theory.study import ResultStore, run_study
from onestep_theory.study import run as study_run
from onestep_theory.study.store import claim_owner

PARAMS = dict(student="tanh", teacher="sin", r=1.1, c=1.02, gamma=0.97, alpha=2.0, beta=1.0, lam=0.1, n_test=300)
SIZES, REPS, THEORY = [30, 60], 2, (0.04, 0.0)
TAG = dict(PARAMS, root_seed=0)
TASKS = [(d, k) for d in SIZES for k in range(REPS)]
ARGV = ["study", "srf", "--student", "tanh", "--teacher", "sin", "--r", "1.1", "--c", "1.02", "--gamma", "0.97",
        "--alpha", "2", "--beta", "1", "--lam", "0.1", "--n-test", "300", "--d", "30,60", "--reps", "2",
        "--workers", "1", "--quiet", "--resume"]


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """A finished study (4 tiny tasks), written once; each test tampers with its own copy."""
    path = str(tmp_path_factory.mktemp("clean") / "clean.sqlite")
    res = run_study("srf", PARAMS, SIZES, REPS, theory=THEORY, store=path, workers=1)
    assert res.run["executed"] == 4
    with ResultStore(path):      # a checkpoint: the copy below holds every row
        pass
    return path, res


def copy(clean, tmp_path):
    dst = str(tmp_path / "copy.sqlite")
    shutil.copy(clean[0], dst)
    return dst


def sql(path, *statements):
    con = sqlite3.connect(path, isolation_level=None)
    for s in statements:
        con.execute(s)
    con.close()


def one_line_exit(tmp_path, capsys, path, code, *extra):
    """The command line on the tampered store: exit ``code`` with one line on stderr, in bounded time."""
    t0 = time.perf_counter()
    assert main(ARGV + ["--store", path, *extra]) == code
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "internal error" not in err, err
    assert time.perf_counter() - t0 < 30
    return err


def test_clean_store_resumes(clean, tmp_path):
    again = run_study("srf", PARAMS, SIZES, REPS, theory=THEORY, store=copy(clean, tmp_path), workers=1)
    assert again.run["executed"] == 0 and again.results() == clean[1].results()


@pytest.mark.parametrize("where", ["", " WHERE d = 60 AND seed_index = 1"])
def test_rewritten_version_column_is_refused_by_get_and_claim_alike(clean, tmp_path, capsys, where):
    """The issue's store: every row (or one) carries another version than its key.  get and claim agree (both refuse
    the task: it is neither stored nor runnable), and the run exits 2 at once instead of waiting."""
    path = copy(clean, tmp_path)
    sql(path, "UPDATE tasks SET version = '0.0.0-copied'" + where)
    with ResultStore(path) as st:
        for d, k in TASKS:
            key = st.key("srf", TAG, d, k)
            try:
                got = ("ok", st.get("srf", TAG, d, k) is not None)
            except InvalidParameterError:
                got = ("refused",)
            try:
                claimed = ("ok", not st.claim(key, claim_owner()))
            except InvalidParameterError:
                claimed = ("refused",)
            assert got == claimed, (d, k, got, claimed)       # "stored" means the same to both
    with pytest.raises(InvalidParameterError, match="version"):
        run_study("srf", PARAMS, SIZES, REPS, theory=THEORY, store=path, workers=1)
    err = one_line_exit(tmp_path, capsys, path, 2)
    assert "store" in err and "version" in err


def test_edited_columns_are_refused(clean, tmp_path, capsys):
    """A row whose own columns no longer hash to its key (here its size) is refused, not read as another task."""
    path = copy(clean, tmp_path)
    sql(path, "UPDATE tasks SET seed_index = 7 WHERE d = 30 AND seed_index = 0")
    assert "hash" in one_line_exit(tmp_path, capsys, path, 2)


def detach_primary_key(path):
    """The tasks table rebuilt without its PRIMARY KEY (so that keys can repeat), rows kept."""
    sql(path, "CREATE TABLE t2 AS SELECT * FROM tasks", "DROP TABLE tasks", "ALTER TABLE t2 RENAME TO tasks")


def test_duplicated_keys(clean, tmp_path, capsys):
    """Identical duplicates are one task (the study finishes, nothing runs); duplicates that disagree are refused."""
    path = copy(clean, tmp_path)
    detach_primary_key(path)
    sql(path, "INSERT INTO tasks SELECT * FROM tasks")
    res = run_study("srf", PARAMS, SIZES, REPS, theory=THEORY, store=path, workers=1)
    assert res.run["executed"] == 0 and res.results() == clean[1].results()
    sql(path, "UPDATE tasks SET result = '{\"test_error\": 0.5}' WHERE rowid = (SELECT MAX(rowid) FROM tasks)")
    assert "different results" in one_line_exit(tmp_path, capsys, path, 2)


@pytest.mark.parametrize("result", ["substr(result, 1, 17)", "'{}'", "'[1, 2]'", "'{\"test_error\": \"x\"}'", "''"])
def test_truncated_or_emptied_results(clean, tmp_path, capsys, result):
    path = copy(clean, tmp_path)
    sql(path, f"UPDATE tasks SET result = {result} WHERE d = 60")
    with pytest.raises(InvalidParameterError, match="store"):
        run_study("srf", PARAMS, SIZES, REPS, theory=THEORY, store=path, workers=1)
    one_line_exit(tmp_path, capsys, path, 2)


def test_truncated_file(clean, tmp_path, capsys):
    """The file cut after its first pages: refused with one line, or (if SQLite still reads it) the run finishes."""
    path = copy(clean, tmp_path)
    data = open(path, "rb").read()
    for cut in (100, 4096, len(data) // 2):
        with open(path, "wb") as fh:
            fh.write(data[:cut])
        t0 = time.perf_counter()
        code = main(ARGV + ["--store", path])
        err = capsys.readouterr().err.strip()
        assert code == 0 or (code == 2 and len(err.splitlines()) == 1 and "internal error" not in err), (cut, err)
        assert time.perf_counter() - t0 < 30


def test_claim_left_by_a_dead_process_is_taken_over(clean, tmp_path, monkeypatch):
    """Claims of a process that no longer exists (same machine, free pid) and of another machine with an unreadable
    time: taken over, the tasks run, the study finishes."""
    monkeypatch.setattr(study_run, "POLL_SECONDS", 0.01)
    path = copy(clean, tmp_path)
    sql(path, "DELETE FROM tasks")
    with ResultStore(path) as st:
        keys = [st.key("srf", TAG, d, k) for d, k in TASKS]
    dead = f"{socket.gethostname()}:{2**22 + 4321}:x"
    sql(path, *[f"INSERT INTO claims VALUES ('{keys[0]}', '{dead}', {time.time()})",
                f"INSERT INTO claims VALUES ('{keys[1]}', 'elsewhere.example:1:x', 'not a time')"])
    t0 = time.perf_counter()
    res = run_study("srf", PARAMS, SIZES, REPS, theory=THEORY, store=path, workers=1, max_wait=5)
    assert res.run["executed"] == 4 and res.results() == clean[1].results()
    assert time.perf_counter() - t0 < 30


def test_claim_of_a_live_run_is_waited_for_with_a_bound(clean, tmp_path, capsys, monkeypatch):
    """A claim held by a live run elsewhere (recent, another machine) that never finishes: the wait ends after
    max_wait with a ResourceError (exit 3, one line), never hangs; the tasks of this run are stored."""
    monkeypatch.setattr(study_run, "POLL_SECONDS", 0.01)
    path = copy(clean, tmp_path)
    sql(path, "DELETE FROM tasks WHERE d = 60")
    with ResultStore(path) as st:
        key = st.key("srf", TAG, 60, 1)
    sql(path, f"INSERT INTO claims VALUES ('{key}', 'elsewhere.example:1:x', {time.time()})")
    messages = []
    t0 = time.perf_counter()
    with pytest.raises(ResourceError, match="waited 0.2 s for 1 task"):
        run_study("srf", PARAMS, SIZES, REPS, theory=THEORY, store=path, workers=1, max_wait=0.2,
                  on_wait=messages.append)
    assert time.perf_counter() - t0 < 10 and len(messages) == 1 and "at most 0.2 s" in messages[0]
    with ResultStore(path) as st:
        assert st.has("srf", TAG, 60, 0) and not st.has("srf", TAG, 60, 1)
    err = one_line_exit(tmp_path, capsys, path, 3, "--max-wait", "0.2")
    assert "--resume" in err
    with pytest.raises(InvalidParameterError, match="max_wait"):
        run_study("srf", PARAMS, SIZES, REPS, theory=THEORY, store=path, workers=1, max_wait=-1)
