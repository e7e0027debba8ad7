"""The sandbox command, its environment allow-list and the doctor: pure parts, no kernel."""

from __future__ import annotations

from jupyter_analyst.kernel.sandbox import SandboxPolicy


def test_command_layers(tmp_path):
    from jupyter_analyst.kernel.sandbox import bwrap_command

    cmd = bwrap_command(["python", "-m", "ipykernel_launcher"], bwrap="/usr/bin/bwrap", workdir=tmp_path / "w",
                        writable=[tmp_path / "sock"], readable=[tmp_path / "blobs"], policy=SandboxPolicy(),
                        identity=(900000007, 900000007), address_space_limit=False, seccomp_fd=5)
    text = " ".join(cmd)
    for flag in ("--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session", "--unsetenv JPY_PARENT_PID"):
        assert flag in text
    assert f"--bind {tmp_path / 'w'} {tmp_path / 'w'}" in text
    assert f"--ro-bind {tmp_path / 'blobs'} {tmp_path / 'blobs'}" in text
    assert "--reuid=900000007" in text and "--as=" not in text
    assert "--seccomp 5" in text and "--unshare-user-try" not in text
    assert cmd[-3:] == ["python", "-m", "ipykernel_launcher"]
    assert "--unshare-net" not in bwrap_command(["x"], bwrap="b", workdir=tmp_path, policy=SandboxPolicy(network=True),
                                                identity=None, address_space_limit=True)


def test_environment_allow_list(tmp_path):
    from jupyter_analyst.kernel.sandbox import scrub_environment

    env = {"PATH": "/usr/bin", "OPENAI_API_KEY": "sk", "DATABASE_URL": "postgres://u:p@h/d", "JUPYTER_TOKEN": "t",
           "AWS_SECRET_ACCESS_KEY": "a", "LC_ALL": "C.UTF-8", "SOURCE_DATE_EPOCH": "0"}
    out = scrub_environment(env, home=tmp_path, extra={"MY_SETTING": "1"})
    assert set(out) == {"PATH", "LC_ALL", "SOURCE_DATE_EPOCH", "HOME", "MPLCONFIGDIR", "XDG_CACHE_HOME", "MY_SETTING",
                        "USER", "LOGNAME"}


def test_doctor_reports_every_layer():
    from jupyter_analyst.kernel.doctor import report, run_checks

    checks = run_checks()
    names = {c.name for c in checks}
    assert {"bubblewrap", "PID namespace", "network namespace", "cgroup memory and process limits", "prlimit"} <= names
    text = report(checks)
    assert "bubblewrap" in text and ("all sandbox layers are active" in text or "missing:" in text)
