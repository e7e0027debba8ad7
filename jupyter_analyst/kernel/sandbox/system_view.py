"""What a sandboxed kernel sees of the host's system: ``/usr`` whole, of ``/etc`` an allow-list.

``/usr`` (and the links to it: ``/bin``, ``/lib``, ...) holds programs and libraries, the
same on every machine of a distribution, and is mounted read-only as it is. ``/etc`` is
where an administrator puts a machine's own settings, secrets among them: the Jupyter
server's configuration (which may hold the model endpoint's API key), pip's and npm's index
credentials, ``/etc/environment``, every local account in ``/etc/passwd``. The kernel runs
the model's code, so it sees only the names of :data:`ETC_ALLOW` there, each what a data
kernel was seen to read (the loader's cache, the time zone, fontconfig for matplotlib's
``fc-list``, public certificates, ...). A link among them stays a link: DuckDB and tzlocal
read the zone's name off ``/etc/localtime``'s target.

The accounts, the host and name lookups are the sandbox's own (:func:`etc_files`): a
password file with ``root``, the kernel's uid as ``analyst`` and ``nobody``, so
``pwd.getpwuid(os.getuid())`` and ``getpass.getuser()`` answer and no host account is
listed; ``nsswitch.conf`` asks only those files, never the host's directory services. The
host writes them into memory files bubblewrap copies into its own root and mounts
read-only (``--ro-bind-data``): nothing on the host's disk, nothing the kernel can change.

``/opt`` is not mounted: an interpreter installed there is mounted as the kernel's
interpreter (``interpreter_paths``), and nothing else of it is the kernel's business.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

#: Host folders mounted read-only whole (the system's programs and libraries).
SYSTEM_FOLDERS = ("/usr",)
#: The links among them (``/bin`` → ``usr/bin`` on a merged-``/usr`` system), or folders.
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")

ETC = Path("/etc")

#: The names under the host's ``/etc`` a kernel sees (read-only; a link stays a link). Each
#: is something a Python data kernel reads there; anything else an administrator put in
#: ``/etc`` is not in the sandbox.
ETC_ALLOW = (
    # The dynamic loader: where shared libraries are (CUDA's, a distribution's multiarch).
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d",
    # The time zone: the C library, pandas, DuckDB's ICU (which reads the link's target).
    "localtime", "timezone",
    # Debian's /usr/bin links go through it.
    "alternatives",
    # fontconfig: matplotlib runs `fc-list` to find the system's fonts.
    "fonts",
    # Public certificates and OpenSSL's settings (OpenSSL 3 reads them at start); Debian's
    # and Red Hat's places. Never ssl/private.
    "ssl/certs", "ssl/openssl.cnf", "pki/tls/certs", "pki/tls/openssl.cnf", "pki/ca-trust/extracted",
    # Public tables: file types (mimetypes), locale names, protocols and services.
    "mime.types", "locale.alias", "protocols", "services", "gai.conf", "host.conf",
    # What the system is (platform.freedesktop_os_release).
    "os-release",
)
#: With the network allowed, the host's resolver and host names too.
ETC_NETWORK = ("resolv.conf", "hosts")

#: The sandbox's host name (bubblewrap's ``--hostname``), in its own ``/etc/hosts``.
HOSTNAME = "analyst-sandbox"
#: The kernel's account name.
ACCOUNT = "analyst"
NOBODY = 65534

#: Lookups answered by the sandbox's own files only: no directory service of the host's
#: (LDAP, SSSD, systemd-userdb) is asked, and none would be reachable.
NSSWITCH = """\
passwd: files
group: files
shadow: files
hosts: files dns
networks: files
protocols: files
services: files
ethers: files
rpc: files
"""


#: bubblewrap arguments that make the sandbox's ``/etc`` read-only, after the last mount in it.
SEAL = ["--remount-ro", str(ETC)]


def system_mounts() -> list[Path]:
    """The system folders mounted from the host whole (the links among them are recreated)."""
    return [Path(p) for p in (*SYSTEM_FOLDERS, *SYSTEM_LINKS) if Path(p).is_dir() and not Path(p).is_symlink()]


def etc_allowed(*, network: bool) -> list[Path]:
    """The allow-listed names of :data:`ETC_ALLOW` (and :data:`ETC_NETWORK` with the network)
    there are on this host, as ``/etc/...`` paths, parents first."""
    names = (*ETC_ALLOW, *(ETC_NETWORK if network else ()))
    return sorted((ETC / name for name in names if os.path.lexists(ETC / name)), key=lambda p: (len(p.parts), str(p)))


def etc_files(uid: int, gid: int, *, home: Path, network: bool) -> dict[Path, bytes]:
    """The files of ``/etc`` the sandbox writes itself for a kernel running as ``uid:gid``.

    >>> files = etc_files(900000001, 900000001, home=Path("/w"), network=False)
    >>> print(files[Path("/etc/passwd")].decode(), end="")
    root:x:0:0:root:/root:/usr/sbin/nologin
    analyst:x:900000001:900000001:analyst:/w:/bin/sh
    nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
    >>> sorted(str(p) for p in files)
    ['/etc/group', '/etc/hostname', '/etc/hosts', '/etc/nsswitch.conf', '/etc/passwd']
    """
    users = ["root:x:0:0:root:/root:/usr/sbin/nologin"]
    groups = ["root:x:0:"]
    if uid not in (0, NOBODY):
        users.append(f"{ACCOUNT}:x:{uid}:{gid}:{ACCOUNT}:{home}:/bin/sh")
    if gid not in (0, NOBODY):
        groups.append(f"{ACCOUNT}:x:{gid}:")
    users.append(f"nobody:x:{NOBODY}:{NOBODY}:nobody:/nonexistent:/usr/sbin/nologin")
    groups.append(f"nogroup:x:{NOBODY}:")
    files = {
        ETC / "passwd": "\n".join(users) + "\n",
        ETC / "group": "\n".join(groups) + "\n",
        ETC / "nsswitch.conf": NSSWITCH,
        ETC / "hostname": f"{HOSTNAME}\n",
    }
    if not network:
        files[ETC / "hosts"] = f"127.0.0.1\tlocalhost {HOSTNAME}\n::1\tlocalhost ip6-localhost ip6-loopback\n"
    return {path: text.encode() for path, text in files.items()}


def data_fds(files: Mapping[Path, bytes]) -> dict[Path, int]:
    """A readable memory file for each of ``files``, for ``bwrap --ro-bind-data FD``
    (inherited by bubblewrap; the caller closes them once it has started)."""
    fds: dict[Path, int] = {}
    for path, data in files.items():
        fd = os.memfd_create(f"analyst-{path.name}", 0)  # not CLOEXEC: bubblewrap reads it
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
        fds[path] = fd
    return fds


def system_args(*, network: bool, files: Mapping[Path, int]) -> list[str]:
    """bubblewrap arguments for the system: ``/usr`` and its links, ``/etc``'s allow-list,
    and the sandbox's own files of ``/etc`` (``files``: their descriptors, :func:`data_fds`).

    ``/etc`` is a tmpfs of its own, which the caller makes read-only once everything is
    mounted in it (:data:`SEAL`): a kernel not dropped to another uid owns what bubblewrap
    makes in its user namespace. Every folder the sandbox makes is 0755: bubblewrap's own
    are 0700, which the kernel's uid could not enter.
    """
    args: list[str] = []
    for path in SYSTEM_FOLDERS:
        if Path(path).is_dir():
            args += ["--ro-bind", path, path]
    for path in SYSTEM_LINKS:
        p = Path(path)
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), path]
        elif p.is_dir():
            args += ["--ro-bind", path, path]
    made = {Path("/"), ETC}
    args += ["--perms", "0755", "--tmpfs", str(ETC)]
    for path in [*etc_allowed(network=network), *files]:
        for folder in reversed(path.parents):
            if folder not in made:
                args += ["--perms", "0755", "--dir", str(folder)]
                made.add(folder)
        if path in files:
            args += ["--perms", "0644", "--ro-bind-data", str(files[path]), str(path)]
        elif path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        else:
            args += ["--ro-bind", str(path), str(path)]
        made.add(path)
    return args
