"""Saves replace only regular files: a device, a folder, a pipe or a dangling link is refused before anything is
written, and a failed write leaves the old file and no temporary file behind."""

from __future__ import annotations

import os
import stat

import pytest

from tabletop_rl.core.files import check_save_target, replace_file


def _write(text):
    return lambda temp: temp.write_text(text, encoding="utf-8")


def test_a_new_file_and_a_replaced_file_are_written_whole(tmp_path):
    target = tmp_path / "save.json"
    replace_file(target, _write("one"))
    replace_file(target, _write("two"))
    assert target.read_text() == "two" and os.listdir(tmp_path) == ["save.json"]


def test_the_null_device_is_refused_without_writing():
    with pytest.raises(ValueError, match=r"^cannot save to /dev/null: it is a device, not a regular file$"):
        check_save_target(os.devnull)
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


@pytest.mark.parametrize("kind", ["folder", "named pipe", "link to a folder", "link to nothing"])
def test_other_targets_are_refused_and_left_as_they_were(tmp_path, kind):
    target = tmp_path / "target"
    if kind == "folder":
        target.mkdir()
    elif kind == "named pipe":
        os.mkfifo(target)
    elif kind == "link to a folder":
        (tmp_path / "dir").mkdir()
        target.symlink_to(tmp_path / "dir")
    else:
        target.symlink_to(tmp_path / "missing")
    before = os.lstat(target)
    with pytest.raises(ValueError, match=r"^cannot save to .*, not a regular file$"):
        replace_file(target, _write("x"))
    after = os.lstat(target)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    assert sorted(os.listdir(tmp_path)) == sorted(["target"] + (["dir"] if kind == "link to a folder" else []))


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "save.json"
    target.write_text("old")

    def fail(temp):
        temp.write_text("half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        replace_file(target, fail)
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["save.json"]
