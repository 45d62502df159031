"""How `ricochet serve` keeps its processes, as a supervisor (systemd, supervisord)
does: they go with it however it ends, they are started again when they die,
and two serves never share an instance or a port.

- **One process group for the whole stack** (`Stack`), led by a watchdog: a
  shell that reads a pipe only `ricochet serve` holds.  When serve ends in any
  way (`kill -9` included) the kernel closes the pipe, and the watchdog sends
  SIGTERM to the group, then SIGKILL 5 s later.  The group takes in every
  process's children too (gunicorn's web processes, Celery's pool, nginx's
  workers, a Redis save), which PR_SET_PDEATHSIG alone would not: it reaches
  a direct child only.  Each direct child has it besides (SIGTERM), so that one
  still goes should the watchdog have been killed with serve.
- **serve is the subreaper of its children** (PR_SET_CHILD_SUBREAPER): what a
  dead child leaves (an nginx worker still holding the port, a pool process)
  becomes serve's child, and serve ends it (`Stack.sweep`) before the child
  starts again.
- **A lock on the instance folder** (`lock_instance`, flock held for serve's
  life) and **a bind test of the port** (`port_refusal`), both before anything
  starts.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

FIRST_DELAY, LONGEST_DELAY = 1.0, 60.0  # seconds before a dead process starts again (doubling)
STEADY = 60.0  # seconds a process must run for its next restart to wait FIRST_DELAY again
GRACE = 5  # seconds the watchdog gives the stack between SIGTERM and SIGKILL

PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36  # <linux/prctl.h>
LINUX = sys.platform.startswith("linux")
_libc = ctypes.CDLL(None, use_errno=True) if LINUX else None

# The watchdog: TERM, INT and HUP ignored (it sends TERM to its own group); `read`
# returns at the pipe's end, that is when `ricochet serve` has ended.
WATCHDOG = f'trap "" TERM INT HUP; read line; kill -TERM 0; sleep {GRACE}; kill -KILL 0'


def say(text: str) -> None:
    print(f"ricochet: {text}", file=sys.stderr, flush=True)


def ended(code: int) -> str:
    return f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with code {code}"


def _prctl(option: int, value: int) -> None:
    if _libc is not None and _libc.prctl(option, value, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _dies_with(parent: int) -> Callable[[], None]:
    """A child's preexec_fn: SIGTERM when `parent` (the thread that started it) ends;
    if it ended already, before the child could ask, the child ends now."""
    def preexec() -> None:
        _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
    return preexec


class Stack:
    """The process group of everything `ricochet serve` starts, and its watchdog."""

    def __init__(self) -> None:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        self.group = 0  # the watchdog's first start makes the group; later ones join it
        self._pipe: int | None = None
        self.watchdog = self._watch()
        self.children: set[subprocess.Popen[bytes]] = {self.watchdog}
        self._orphaned = False
        signal.signal(signal.SIGCHLD, self._child_ended)

    def _watch(self) -> subprocess.Popen[bytes]:
        """The watchdog, started in the stack's group (a new one at first, or if none is left of it)."""
        if self._pipe is not None:
            os.close(self._pipe)
        read, self._pipe = os.pipe()  # not inherited (PEP 446): serve alone holds the write end
        try:
            try:
                proc = subprocess.Popen(["/bin/sh", "-c", WATCHDOG], stdin=read, stdout=subprocess.DEVNULL,
                                        process_group=self.group)
            except PermissionError:  # the group is gone with all its processes: a new one
                proc = subprocess.Popen(["/bin/sh", "-c", WATCHDOG], stdin=read, stdout=subprocess.DEVNULL,
                                        process_group=0)
        finally:
            os.close(read)
        self.group = os.getpgid(proc.pid)
        return proc

    def spawn(self, argv: list[str], **popen: Any) -> subprocess.Popen[bytes]:
        """Start a process of the stack: in its group, ending when serve ends."""
        proc = subprocess.Popen(argv, process_group=self.group, preexec_fn=_dies_with(os.getpid()), **popen)
        self.children.add(proc)
        return proc

    def _child_ended(self, signum: int, frame: object) -> None:
        self._orphaned = True  # a child died: its children, if any, are serve's now

    def check(self) -> None:
        """Called every tick: the watchdog started again if it died, and what dead children left ended."""
        if self.watchdog.poll() is not None:
            self.children.discard(self.watchdog)
            say(f"the watchdog (pid {self.watchdog.pid}) {ended(self.watchdog.returncode)}; starting it again")
            self.watchdog = self._watch()
            self.children.add(self.watchdog)
        if self._orphaned:
            self._orphaned = False
            if left := self.sweep():
                say(f"ended what a dead process left: pid {', '.join(map(str, left))}")

    def sweep(self) -> list[int]:
        """SIGKILL the processes serve adopted (children of a dead child), and reap those that ended;
        returns the pids killed."""
        self.children = {p for p in self.children if p.poll() is None}
        ours = {p.pid for p in self.children}
        killed = []
        for pid, state in _children_of(os.getpid()):
            if pid in ours:
                continue
            if state != "Z":
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
        return killed

    def end(self) -> None:
        """After the graceful stop: SIGKILL whatever is left of the group (the watchdog too), reaped."""
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.group, signal.SIGKILL)
        for proc in self.children:
            proc.wait()
        deadline = time.monotonic() + 5
        while (left := _children_of(os.getpid())) and time.monotonic() < deadline:
            for pid, _ in left:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
            time.sleep(0.05)
        if self._pipe is not None:
            os.close(self._pipe)
            self._pipe = None


def _children_of(parent: int) -> list[tuple[int, str]]:
    """(pid, state) of the processes whose parent is `parent`, from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue  # gone meanwhile
            if int(fields[1]) == parent:
                found.append((int(entry.name), fields[0]))
    return found


class Supervised:
    """A process `ricochet serve` keeps running: started again when it dies (after
    FIRST_DELAY, twice as long after each death up to LONGEST_DELAY, back to
    FIRST_DELAY once it has run STEADY seconds), and the log says so."""

    def __init__(self, name: str, start: Callable[[], subprocess.Popen[bytes]]) -> None:
        self.name, self._start = name, start
        self.delay = FIRST_DELAY
        self.due: float | None = None  # when to start it again, once it has died
        self.proc = start()
        self.started = time.monotonic()

    def check(self) -> None:
        """Called every tick: notices a death, and starts the process again when its delay is over."""
        now = time.monotonic()
        if self.due is None:
            if self.proc.poll() is None:
                if now - self.started > STEADY:
                    self.delay = FIRST_DELAY
                return
            say(f"the {self.name} (pid {self.proc.pid}) {ended(self.proc.returncode)}; "
                f"starting it again in {self.delay:g} s")
            self.due, self.delay = now + self.delay, min(self.delay * 2, LONGEST_DELAY)
        elif now >= self.due:
            try:
                self.proc = self._start()
            except (OSError, RuntimeError) as e:  # its program gone, say: tried again after the next delay
                say(f"the {self.name} could not start again ({e}); trying again in {self.delay:g} s")
                self.due, self.delay = now + self.delay, min(self.delay * 2, LONGEST_DELAY)
                return
            self.started, self.due = now, None
            say(f"the {self.name} started again (pid {self.proc.pid})")

    def stop(self) -> None:
        stop(self.proc)


def stop(proc: subprocess.Popen[bytes] | None) -> None:
    """SIGTERM, then SIGKILL after 20 s."""
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


LOCK_FILE = "serve.lock"


def lock_instance(instance: Path, address: str) -> IO[str] | str:
    """Hold the instance folder for this serve's life (the open file keeps the lock;
    the kernel lets go when the process ends, however).  Another serve holding it
    already: the message that says which, instead."""
    instance.mkdir(parents=True, exist_ok=True)
    held = open(instance / LOCK_FILE, "a+", encoding="utf-8")  # noqa: SIM115 - open for the serve's life
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        held.seek(0)
        holder = held.read().strip() or "pid unknown"
        held.close()
        return (f"another `ricochet serve` ({holder}) is running from the instance folder {instance}; "
                "stop it first, or give this one another --instance")
    held.seek(0)
    held.truncate()
    held.write(f"pid {os.getpid()}, {address}\n")
    held.flush()
    return held


def port_refusal(host: str, port: int) -> str | None:
    """Why `host`:`port` cannot be listened on (taken, say), tried as nginx and
    gunicorn bind (SO_REUSEADDR); None when it can."""
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        return f"cannot listen on {host}:{port}: {e.strerror} (give --host an address of this machine)"
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(address)
                s.listen()
            except OSError as e:
                taken = e.errno == errno.EADDRINUSE
                return (f"port {port} on {host} is {'taken' if taken else 'refused'} ({e.strerror}): "
                        + ("stop what listens there, or give --port another port" if taken
                           else "give --port another port"))
    return None


def listening(proc: subprocess.Popen[bytes], host: str, port: int, seconds: float) -> bool:
    """Wait until `host`:`port` accepts connections; False when `proc` exits first or `seconds` pass."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    deadline = time.monotonic() + seconds
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            socket.create_connection((host, port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.1)
    return False
