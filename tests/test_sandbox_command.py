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
    assert {"bubblewrap", "PID namespace", "network namespace", "cgroup memory and process limits", "prlimit",
            "step end checked from outside"} <= names
    text = report(checks)
    assert "bubblewrap" in text and ("all sandbox layers are active" in text or "missing:" in text)


def test_doctor_reports_the_kernel_identity_and_the_output_caps():
    import os

    from jupyter_analyst.kernel.doctor import report, run_checks
    from jupyter_analyst.kernel.outputs import OutputCaps

    text = report(run_checks(SandboxPolicy(uid_first=700000, uid_count=10), OutputCaps(step_files=7)))
    assert "per step 256 MB in 7 files; per thread 4096 MB in 2000 artifacts" in text
    if os.geteuid() == 0:
        assert "each kernel its own uid in 700000-700009" in text
    else:
        assert "share its process limit" in text


def test_seccomp_program_is_well_formed_for_each_machine():
    import struct

    from jupyter_analyst.kernel.seccomp import CLONE_NEW_ANY, program

    for machine in ("x86_64", "aarch64"):
        code = program(machine)
        entries = [struct.unpack("=HBBI", code[i:i + 8]) for i in range(0, len(code), 8)]
        assert entries[0] == (0x20, 0, 0, 4), "first the architecture is loaded"
        assert (0x45, entries[-4][1], 0, CLONE_NEW_ANY) in entries, "clone's flags are tested"
        assert entries[-1][3] & 0xFFFF == 38 and entries[-2][3] & 0xFFFF == 1, "ENOSYS, EPERM"
