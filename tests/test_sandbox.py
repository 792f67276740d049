"""The command sandbox primitive (``runtime/sandbox``): real processes confined by Landlock
and by bubblewrap; writes beneath the allowed trees work, all others fail, reads stay open,
and what a confined command starts (a background job) is confined too."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from wave_ls.runtime.processes import popen_confined
from wave_ls.runtime.sandbox import available, confinement, read_only_confinement
from wave_ls.runtime.sandbox.bubblewrap import bwrap_path
from wave_ls.runtime.sandbox.landlock import abi_version

MECHANISMS = [
    pytest.param("landlock", marks=pytest.mark.skipif(abi_version() < 1, reason="no Landlock")),
    pytest.param("bubblewrap", marks=pytest.mark.skipif(bwrap_path() is None, reason="no bwrap")),
]


def run(argv: list[str], allowed: Path) -> subprocess.CompletedProcess[str]:
    box = confinement([allowed])
    try:
        return subprocess.run(
            box.argv(argv), preexec_fn=box.preexec, capture_output=True, text=True, timeout=30
        )
    finally:
        box.close()


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_writes_only_beneath_the_allowed_tree(
    mechanism: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WAVE_SANDBOX", mechanism)
    assert available()[0] == mechanism
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    (outside / "keep.txt").write_text("original\n")
    script = f"""
        echo in > {inside}/a.txt && mkdir {inside}/sub && echo ok-inside
        echo out > {outside}/b.txt || echo denied-new
        echo changed > {outside}/keep.txt || echo denied-change
        rm {outside}/keep.txt || echo denied-rm
        ln -s /etc/passwd {outside}/link || echo denied-symlink
        cat {outside}/keep.txt
        echo x > /dev/null && echo dev-null-ok
        (sleep 0.3; echo late > {outside}/late.txt) &
        wait
    """
    done = run(["bash", "-c", script], inside)
    lines = done.stdout.split()
    assert lines == [
        "ok-inside",
        "denied-new",
        "denied-change",
        "denied-rm",
        "denied-symlink",
        "original",
        "dev-null-ok",
    ], done.stderr
    assert (inside / "a.txt").read_text() == "in\n" and (inside / "sub").is_dir()
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    assert (outside / "keep.txt").read_text() == "original\n"


def test_none_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WAVE_SANDBOX", "none")
    box = confinement([tmp_path])
    assert not box.confined and "WITHOUT a sandbox" in box.note
    assert box.argv(["true"]) == ["true"] and box.preexec is None


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_commands_started_together_are_confined_and_the_caller_is_not(
    mechanism: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # popen_confined: with Landlock the starts come from a thread that confines itself, so
    # Python can vfork; the thread's confinement must reach the commands and stop there.
    monkeypatch.setenv("WAVE_SANDBOX", mechanism)
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    box = confinement([inside])
    options = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    try:
        processes = popen_confined(
            [
                (["sh", "-c", f"echo a > {inside}/a.txt && echo wrote-inside"], options),
                (["sh", "-c", f"echo b > {outside}/b.txt || echo denied-outside"], options),
            ],
            box,
        )
        outputs = [process.communicate(timeout=30)[0].strip() for process in processes]
    finally:
        box.close()
    assert outputs == ["wrote-inside", "denied-outside"]
    assert (inside / "a.txt").read_text() == "a\n"
    assert not (outside / "b.txt").exists()
    (outside / "c.txt").write_text("the server still writes\n")  # this thread: unconfined
    assert (outside / "c.txt").read_text() == "the server still writes\n"


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_the_read_only_sandbox_lasts_and_every_start_is_confined(
    mechanism: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # read_only_confinement: one for the process (our own git's), its commands started by
    # one thread confined once; closing it keeps it usable, and no start escapes it.
    monkeypatch.setenv("WAVE_SANDBOX", mechanism)
    box = read_only_confinement()
    assert box is read_only_confinement() and box.mechanism == mechanism
    options = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    outputs = []
    for n in range(3):
        box.close()  # what a caller does after use: nothing for a lasting one
        [process] = popen_confined(
            [(["sh", "-c", f"echo {n} > {tmp_path}/{n}.txt || echo denied"], options)], box
        )
        outputs.append(process.communicate(timeout=30)[0].strip())
    assert outputs == ["denied"] * 3
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "mine.txt").write_text("the server still writes\n")  # this thread: unconfined
    assert (tmp_path / "mine.txt").read_text() == "the server still writes\n"
