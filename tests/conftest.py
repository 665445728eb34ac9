"""Shared test setup: the helper modules in ``tests/helpers/`` (``positions``, ``reference_splendor``,
``fake_openai_server``) are importable from every test file as top-level modules; Ray, which reads its
address policy when first imported, binds only to 127.0.0.1 in every test that starts it.

The suite leaves the machine as it found it: hypothesis keeps no example database in the working folder; every
temporary file a test or its programs make (``tempfile``'s, a child process's, Ray's session folders, a library's
logs) goes under one folder of the suite's own, removed when the suite ends, and a run that leaves anything new in
the machine's temporary folder fails, naming it; a test after which ``/dev/null`` is no longer a character device
fails, naming itself (a save aimed at the device once replaced it with a regular file, which breaks every program
on the machine that writes to it)."""

import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # before any test module imports ray

HELPERS = str(Path(__file__).resolve().parent / "helpers")
if HELPERS not in sys.path:
    sys.path.insert(0, HELPERS)


# The files that take longest (from an empty numba cache, as in CI), started first so that the two worker
# processes end together: xdist hands out whole files (`--dist loadfile`) in collection order
# (`--no-loadscope-reorder`), and a long file started last ran alone for up to a minute.
LONGEST_FIRST = ("test_cli.py", "test_docs.py", "test_doctests.py", "test_typecheck.py", "arena/test_ray_arena.py",
                 "ui/test_terminal.py")


settings.register_profile("no-files", database=None)
settings.load_profile("no-files")


#: What the machine's temporary folder held when the suite started (the controlling process's view).
_TEMP_BEFORE = pytest.StashKey[set[str]]()


def _machine_temp_entries() -> set[str]:
    # pytest's own numbered folders for tmp_path live there and are pytest's to prune
    return {name for name in os.listdir(tempfile.gettempdir()) if not name.startswith("pytest-of-")}


def pytest_sessionstart(session):
    if not hasattr(session.config, "workerinput"):  # the controller, or a run without workers
        session.config.stash[_TEMP_BEFORE] = _machine_temp_entries()


def pytest_sessionfinish(session, exitstatus):
    before = session.config.stash.get(_TEMP_BEFORE, None)
    if before is None:
        return
    left = sorted(_machine_temp_entries() - before)
    if left:
        folder = tempfile.gettempdir()
        print(f"\nthe suite left {len(left)} new entries in {folder} (or another program made them meanwhile): "
              + ", ".join(left[:10]), file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session", autouse=True)
def _temporary_files_stay_in_the_suites_folder():
    """``tempfile`` in this process, and through ``TMPDIR`` every program a test starts (Ray's session folders
    too), writes under one short folder of the suite's own (Ray's socket paths must stay under 108 bytes), removed
    at the end."""
    folder = tempfile.mkdtemp(prefix="tabletop-tests-")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TMPDIR", folder)
        patch.setattr(tempfile, "tempdir", folder)
        yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True)
def _llm_servers_are_met_afresh():
    """What a process learns of an LLM server (the reply format ``mode=auto`` found it takes, its concurrency slots,
    whether its first timeout was explained) is kept per ``base_url``: each test starts without it, since a loopback
    fake server may get an earlier test's port, and scripted backends share the default ``base_url``. Nothing is
    imported for it: a module not loaded yet has nothing to forget."""
    policy = sys.modules.get("tabletop_rl.agents.llm.policy")
    if policy is not None:
        policy.forget_server_modes()
    client = sys.modules.get("tabletop_rl.agents.llm.client")
    if client is not None:
        with client._SERVER_SLOTS_LOCK:
            client._SERVER_SLOTS.clear()
        with client._TIMEOUTS_EXPLAINED_LOCK:
            client._TIMEOUTS_EXPLAINED.clear()
    yield


@pytest.fixture(autouse=True)
def _null_device_stays_a_device():
    yield
    if not stat.S_ISCHR(os.stat(os.devnull).st_mode):
        pytest.fail(f"{os.devnull} is no longer a character device: this test wrote over it "
                    f"(as root, restore it with: rm -f {os.devnull} && mknod -m 666 {os.devnull} c 1 3)")


TESTS = Path(__file__).resolve().parent
_renamed = [name for name in LONGEST_FIRST if not (TESTS / name).is_file()]
if _renamed:  # a renamed file would quietly lose its place
    raise FileNotFoundError(f"tests/conftest.py's LONGEST_FIRST names files that are not there: {', '.join(_renamed)}")


def pytest_collection_modifyitems(items):
    def rank(item):
        path = Path(str(item.path)).resolve()  # outside tests/ too (`pytest tests src --doctest-modules`)
        name = path.relative_to(TESTS).as_posix() if path.is_relative_to(TESTS) else ""
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: the order within a file and among the rest stays
