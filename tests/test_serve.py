"""`gd-assets serve`: the commands of other shells run in one warm process per data home, printing what
they print when run on their own; a client's Ctrl-C ends its command there as it would end its own
process, and anything a server would do differently (settings, code, a command in flight) is run here."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, cli_env
from test_resume import write_project

from gd_assets import serve

pytestmark = pytest.mark.slow
EXAMPLE = str(REPO / "examples" / "dodge-godot3")
GD_ASSETS = str(Path(sys.executable).with_name("gd-assets"))  # the console entry, which hands commands over


def client(*args: str, env: dict, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([GD_ASSETS, *args], env={**env, **extra}, capture_output=True, text=True, timeout=600,
                          cwd=REPO)


def server_status(env: dict) -> dict:
    return json.loads(client("serve", "--status", "--json", env=env).stdout)


def wait_until(condition, what: str, seconds: float = 120):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"no {what} after {seconds} s")


@pytest.fixture
def server(analysis_home, tmp_path):
    """`gd-assets serve` on the test's data home, ready; stopped (and its socket gone) afterwards."""
    env = cli_env()
    log = (tmp_path / "serve.log").open("w")
    proc = subprocess.Popen([GD_ASSETS, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT, cwd=REPO)
    wait_until(lambda: "ready in" in (tmp_path / "serve.log").read_text() or proc.poll() is not None, "ready server")
    assert proc.poll() is None, (tmp_path / "serve.log").read_text()
    yield env, proc, tmp_path / "serve.log"
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)   # Ctrl-C
        proc.wait(timeout=60)
    log.close()
    assert proc.returncode == 0
    assert not serve.socket_path(analysis_home.resolve()).exists()


def test_a_served_analysis_is_the_one_run_here_and_other_settings_run_here(server, analysis_home, corpus_home,
                                                                           tmp_path):
    env, proc, log = server
    served = client("analyze", EXAMPLE, "--json", env=env)
    assert served.returncode == 0, served.stderr
    assert server_status(env)["served"] == 1
    assert "analyze " + EXAMPLE + " --json: exit 0" in log.read_text()

    # the same analysis in another home, no server there: the same document, field for field
    alone = client("analyze", EXAMPLE, "--json", env=env, GD_ASSETS_HOME=str(tmp_path / "alone"))
    assert alone.returncode == 0, alone.stderr
    assert json.loads(served.stdout) == json.loads(alone.stdout)

    # the text form, a read-only command, and an error are what they are here
    for args in (("analyze", EXAMPLE), ("status", "dodge-godot3"), ("show", "dodge-godot3", "nosuchkey")):
        there = client(*args, env=env)
        here = client(*args, env=env, GD_ASSETS_SERVER="off")
        assert (there.returncode, there.stdout, there.stderr) == (here.returncode, here.stdout, here.stderr)
    assert client("show", "dodge-godot3", "nosuchkey", env=env).returncode == 1
    assert server_status(env)["served"] == 5

    # a shell with other settings is not served: its command runs in its own process, with its settings
    other = client("-v", "status", "dodge-godot3", env=env, GD_ASSETS_PROGRESS_EVERY="3")
    assert other.returncode == 0
    assert "does not take the command: its environment differs in GD_ASSETS_PROGRESS_EVERY" in other.stderr
    assert server_status(env)["served"] == 5

    stopped = client("serve", "--stop", env=env)
    assert stopped.returncode == 0 and "stopped server" in stopped.stdout
    assert proc.wait(timeout=60) == 0
    assert "not take" not in client("-v", "status", "dodge-godot3", env=env).stderr  # no server: nothing to say


def test_ctrl_c_ends_the_served_command_like_its_own_process_and_a_fresh_one_serves_on(server, tmp_path):
    """While a served analysis runs, a second shell's command runs in its own process; the first client's
    Ctrl-C ends the analysis (the recorded fragments kept), a fresh serving process takes over, and a
    served `resume` finishes the rest."""
    env, proc, log = server
    big = tmp_path / "big"
    write_project(big, files=300)
    first_pid = server_status(env)["pid"]
    analysis = subprocess.Popen([GD_ASSETS, "analyze", str(big)], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=REPO)
    busy = wait_until(lambda: server_status(env)["busy"], "busy server")
    assert busy == f"analyze {big}"

    meanwhile = client("-v", "fragments", EXAMPLE, env=env)
    assert meanwhile.returncode == 0 and "dodge-godot3" in meanwhile.stdout
    assert f"is running `gd-assets analyze {big}`" in meanwhile.stderr

    wait_until(lambda: client("status", "big", env=env).returncode == 0, "sliced project")   # run here: busy
    analysis.send_signal(signal.SIGINT)   # the analysis is under way: its fragments are sliced
    out, err = analysis.communicate(timeout=120)
    assert analysis.returncode == 130, err
    assert "interrupted; what was recorded is kept: `gd-assets resume big`" in err
    assert "big: godot3" not in out   # no verdict: the command ended
    renewed = wait_until(lambda: (s := server_status(env))["running"] and s["pid"] != first_pid and s, "fresh server")
    assert renewed["served"] == 0 and not renewed["busy"]
    assert "interrupted by its client" in log.read_text()
    cut = json.loads(client("status", "big", "--json", env=env).stdout)
    assert cut["counts"]["done"] < len(cut["fragments"]) == 3300

    resumed = client("resume", "big", env=env)
    assert resumed.returncode == 0, resumed.stderr
    done = json.loads(client("status", "big", "--json", env=env).stdout)["counts"]
    assert done["done"] == 3300 and not done["failed"] + done["stopped"] + done["waiting"] + done["running"], done
    assert server_status(env)["served"] == 3


def test_a_server_refuses_other_code_and_the_client_imports_nothing_heavy(server, analysis_home):
    env, proc, log = server
    conn = socket.socket(socket.AF_UNIX)
    conn.connect(str(serve.socket_path(analysis_home.resolve())))
    reader = conn.makefile("r")
    assert json.loads(reader.readline())["hello"]["busy"] is None
    conn.sendall((json.dumps({"argv": ["status", "x"], "cwd": str(REPO), "settings": serve.settings(env),
                              "code": "other", "tty": [False, False]}) + "\n").encode())
    assert json.loads(reader.readline()) == {"refused": "it runs other code"}
    conn.close()
    assert server_status(env)["served"] == 0

    second = client("serve", env=env)
    assert second.returncode == 1 and "a server already serves" in second.stderr

    probe = ("import sys; from gd_assets import serve; serve.hand_over(['status', 'x']); "
             "print(sorted(m for m in ('dagster', 'duckdb', 'gd_assets.cli') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, cwd=REPO)
    assert loaded.stdout.strip() == "[]", loaded.stderr
    assert server_status(env)["served"] == 1


def test_an_idle_server_stops_by_itself(analysis_home, tmp_path):
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        done = subprocess.run([GD_ASSETS, "serve", "--idle", "0.05"], env=cli_env(), stdout=out,
                              stderr=subprocess.STDOUT, cwd=REPO, timeout=300)
    assert done.returncode == 0, log.read_text()
    assert "no command for 0.05 min: stopping" in log.read_text()
    assert not serve.socket_path(analysis_home.resolve()).exists()
