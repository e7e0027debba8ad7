"""The sandbox command, its environment allow-list and the doctor: pure parts, no kernel."""

from __future__ import annotations

from jupyter_analyst.kernel.sandbox import SandboxPolicy


def test_command_layers(tmp_path):
    from jupyter_analyst.kernel.sandbox.bwrap_command import bwrap_command

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


def test_mounts_cover_a_private_folder_above_a_bind_and_report_a_private_bind(tmp_path):
    from jupyter_analyst.kernel.sandbox.bwrap_command import kernel_mounts, out_of_reach

    uid = (900000123, 900000123)
    shared = tmp_path / "shared"
    private = shared / "private"
    install = private / "py"
    install.mkdir(parents=True)
    (install / "lib.py").write_text("")
    for folder, mode in ((tmp_path, 0o755), (shared, 0o755), (private, 0o700), (install, 0o755)):
        folder.chmod(mode)
    args, view = kernel_mounts([(install, False), (shared, False)], identity=uid)
    text = " ".join(args)
    # The shallower bind first; then the private folder inside it covered, then the install.
    assert text.index(f"--ro-bind {shared} {shared}") < text.index(f"--tmpfs {private}") < text.index(
        f"--ro-bind {install} {install}")
    assert out_of_reach(uid, readable=[install / "lib.py"], binds=[(install, False), (shared, False)]) == []
    assert out_of_reach(uid, readable=[install / "lib.py"]) != [], "without bubblewrap the folder is in the way"
    # A bind the uid cannot enter is never covered (that would hide it): it is reported.
    install.chmod(0o700)
    args, _ = kernel_mounts([(install, False), (install / "lib.py", False)], identity=uid)
    assert f"--tmpfs {install}" not in " ".join(args)
    blocked = out_of_reach(uid, readable=[install / "lib.py"], binds=[(install, False)])
    assert [b.path for b in blocked] == [install] and "cannot enter" in blocked[0].describe()


def test_a_staged_folder_is_mounted_from_its_copy_and_counts_as_the_kernels_own(tmp_path):
    from jupyter_analyst.kernel.sandbox.bwrap_command import kernel_mounts, out_of_reach, unreadable

    uid = (900000123, 900000123)
    user = tmp_path / "clone"  # a user's 0700 folder, a venv in it: the kernel's working folder
    venv = user / ".venv"
    venv.mkdir(parents=True)
    (venv / "lib.py").write_text("")
    data = tmp_path / "data.csv"
    data.write_text("a\n")
    data.chmod(0o600)
    user.chmod(0o700)
    stage = tmp_path / "stage"
    binds = [(venv, False), (data, False), (user, True)]
    assert out_of_reach(uid, readable=[venv / "lib.py"], binds=binds) != [], "the user's own folder is in the way"
    assert unreadable(uid, [data], binds=binds) == [data]
    sources = {user: stage, data: stage / "in" / "data.csv"}
    args, _ = kernel_mounts(binds, identity=uid, sources=sources)
    text = " ".join(args)
    assert f"--bind {stage} {user}" in text and f"--ro-bind {stage / 'in' / 'data.csv'} {data}" in text
    # The staging folder is the kernel's: the folders it holds above a bind are made, 0755.
    assert text.index(f"--bind {stage} {user}") < text.index(f"--ro-bind {venv} {venv}")
    assert out_of_reach(uid, workdir=user, readable=[venv / "lib.py", data], binds=binds, sources=sources) == []
    assert unreadable(uid, [data], binds=binds, sources=sources) == []


def test_environment_allow_list(tmp_path):
    from jupyter_analyst.kernel.sandbox.bwrap_command import scrub_environment

    env = {"PATH": "/usr/bin", "OPENAI_API_KEY": "sk", "DATABASE_URL": "postgres://u:p@h/d", "JUPYTER_TOKEN": "t",
           "AWS_SECRET_ACCESS_KEY": "a", "LC_ALL": "C.UTF-8", "SOURCE_DATE_EPOCH": "0"}
    out = scrub_environment(env, home=tmp_path, extra={"MY_SETTING": "1"})
    assert set(out) == {"PATH", "LC_ALL", "SOURCE_DATE_EPOCH", "HOME", "MPLCONFIGDIR", "XDG_CACHE_HOME", "MY_SETTING",
                        "USER", "LOGNAME"}


def test_doctor_reports_every_layer():
    from jupyter_analyst.kernel.sandbox.doctor import report, run_checks

    checks = run_checks()
    names = {c.name for c in checks}
    assert {"bubblewrap", "PID namespace", "network namespace", "cgroup memory and process limits", "prlimit",
            "step end checked from outside"} <= names
    text = report(checks)
    assert "bubblewrap" in text and ("all sandbox layers are active" in text or "missing:" in text)


def test_doctor_reports_the_kernel_identity_and_the_output_caps():
    import os

    from jupyter_analyst.kernel.sandbox.doctor import report, run_checks
    from jupyter_analyst.kernel.outputs import OutputCaps

    text = report(run_checks(SandboxPolicy(uid_first=700000, uid_count=10), OutputCaps(step_files=7)))
    assert "per step 256 MB in 7 files; per thread 4096 MB in 2000 artifacts" in text
    if os.geteuid() == 0:
        assert "each kernel its own uid in 700000-700009" in text
    else:
        assert "share its process limit" in text


def _verdict(code: bytes, nr: int, arch: int, *args: int) -> int:
    """What the filter answers to one call: a classic BPF machine for the opcodes it uses."""
    import struct

    data = struct.pack("=iIQ6Q", nr, arch, 0, *(list(args) + [0] * 6)[:6])
    program = [struct.unpack("=HBBI", code[i:i + 8]) for i in range(0, len(code), 8)]
    pc, acc = 0, 0
    while True:
        op, jt, jf, k = program[pc]
        if op == 0x20:  # ld [k]
            acc, pc = struct.unpack_from("=I", data, k)[0], pc + 1
        elif op in (0x15, 0x35, 0x45):  # jeq, jge, jset
            hit = acc == k if op == 0x15 else acc >= k if op == 0x35 else bool(acc & k)
            pc += 1 + (jt if hit else jf)
        else:
            assert op == 0x06, f"unexpected opcode {op:#x}"
            return k


def test_seccomp_refuses_each_class_on_each_machine_and_every_other_abi():
    import errno

    from jupyter_analyst.kernel.sandbox.seccomp import ARCHES, CLONE_NEW_ANY, X32_BIT, program, refused_calls

    allow, eperm = 0x7FFF0000, 0x50000 | errno.EPERM
    enosys, eopnotsupp = 0x50000 | errno.ENOSYS, 0x50000 | errno.EOPNOTSUPP
    #: Calls a Python kernel makes all the time: read, write, openat, mmap, futex.
    everyday = {"x86_64": (0, 1, 257, 9, 202), "aarch64": (63, 64, 56, 222, 98)}
    foreign = {"x86_64": 0x40000003, "aarch64": 0x40000028}  # i386, 32-bit ARM
    for machine, arch in ARCHES.items():
        code, nr = program(machine), arch.numbers
        for name in refused_calls(machine):
            assert _verdict(code, nr[name], arch.audit) == eperm, (machine, name)
        for number in everyday[machine]:
            assert _verdict(code, number, arch.audit) == allow, (machine, number)
            assert _verdict(code, number, foreign[machine]) == enosys, "another ABI is refused whole"
        assert _verdict(code, nr["clone"], arch.audit, 0x11) == allow  # SIGCHLD: fork
        assert _verdict(code, nr["clone"], arch.audit, 0x11 | 0x10000000) == eperm  # CLONE_NEWUSER
        for flag in (1 << bit for bit in range(32)):
            if flag & CLONE_NEW_ANY:
                assert _verdict(code, nr["clone"], arch.audit, 0x11 | flag) == eperm, hex(flag)
        assert _verdict(code, nr["clone3"], arch.audit) == enosys
        for call in ("socket", "socketpair"):
            for family in (1, 2, 10):
                assert _verdict(code, nr[call], arch.audit, family, 1) == allow
            for family in (16, 40, 17, 38, 44, 3, 255):
                assert _verdict(code, nr[call], arch.audit, family, 1) == eopnotsupp, (call, family)
        assert _verdict(code, nr["personality"], arch.audit, 0xFFFFFFFF) == allow
        assert _verdict(code, nr["personality"], arch.audit, 0x0040000) == eperm  # ADDR_NO_RANDOMIZE
        assert _verdict(code, nr["ioctl"], arch.audit, 0, 0x541B) == allow  # FIONREAD
        for request in (0x5412, 0x541C, 0xAA00):  # TIOCSTI, TIOCLINUX, USERFAULTFD_IOC_NEW
            assert _verdict(code, nr["ioctl"], arch.audit, 0, request) == eperm
    x86 = ARCHES["x86_64"]
    assert _verdict(program("x86_64"), X32_BIT | 0, x86.audit) == eperm, "x32 calls are refused"
    assert _verdict(program("x86_64"), X32_BIT | x86.numbers["socket"], x86.audit, 40) == eperm
