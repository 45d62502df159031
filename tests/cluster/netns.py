"""Hosts as Linux network namespaces: one namespace a host, each with its own
address on 10.60.0.0/24, joined by veth links to a bridge that lives in a
namespace of its own (the switch), so that nothing is added to the machine's
own network.  Needs root (or CAP_NET_ADMIN) and iproute2; a slowed link needs tc's netem or,
where the kernel lacks it, iptables (NFQUEUE) and nftables.

Every namespace is named `rcl<pid>-<host>` after the process that made it: a
later run removes those whose maker is gone (`sweep`), so a run killed before
its finalizer leaves nothing behind for long.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

PREFIX = "rcl"
SUBNET = "10.60.0"


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


def namespaces() -> list[str]:
    out = _ip("netns", "list", check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def pids_in(ns: str) -> list[int]:
    out = _ip("netns", "pids", ns, check=False).stdout
    return [int(p) for p in out.split() if p.isdigit()]


def kill_all_in(ns: str) -> None:
    """SIGKILL every process of a namespace, until none is left."""
    for _ in range(50):
        pids = pids_in(ns)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)


def remove(ns: str) -> None:
    kill_all_in(ns)
    _ip("netns", "del", ns, check=False)


def sweep() -> list[str]:
    """Remove the namespaces (and their processes) a dead run left behind."""
    removed = []
    for ns in namespaces():
        owner = ns[len(PREFIX):].split("-", 1)[0]
        if ns.startswith(PREFIX) and owner.isdigit() and not Path(f"/proc/{owner}").exists():
            remove(ns)
            removed.append(ns)
    return removed


def why_not() -> str | None:
    """Why namespaces cannot be made here, or None when they can."""
    if shutil.which("ip") is None:
        return "iproute2 is not installed (make cluster-tools installs it)"
    if os.geteuid() != 0:
        return "network namespaces need root (CI runs these tests as root)"
    probe = f"{PREFIX}{os.getpid()}-probe"
    made = _ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"cannot make a network namespace: {made.stderr.strip()}"
    try:
        link = _ip("-n", probe, "link", "add", "br0", "type", "bridge", check=False)
        if link.returncode != 0:
            return f"cannot make a bridge in a namespace: {link.stderr.strip()}"
    finally:
        _ip("netns", "del", probe, check=False)
    return None


def netem_available() -> bool:
    """Whether the kernel has the netem queueing discipline (some VM kernels lack it)."""
    probe = f"{PREFIX}{os.getpid()}-netem"
    _ip("netns", "add", probe, check=False)
    try:
        _ip("-n", probe, "link", "set", "lo", "up", check=False)
        tried = subprocess.run(["ip", "netns", "exec", probe, "tc", "qdisc", "add", "dev", "lo", "root", "netem",
                                "delay", "1ms"], capture_output=True, text=True)
        return tried.returncode == 0
    finally:
        _ip("netns", "del", probe, check=False)


class Network:
    """A switch and the hosts plugged into it."""

    def __init__(self) -> None:
        self.prefix = f"{PREFIX}{os.getpid()}"
        self.switch = f"{self.prefix}-switch"
        self.hosts: dict[str, str] = {}  # host name -> address
        self.impaired: dict[str, str] = {}  # host name -> how (netem, or the user-space queue and nftables)
        # (host, queue number) -> its delay queue and the iptables rule that feeds it
        self.delayers: dict[tuple[str, int], tuple[subprocess.Popen, list[str]]] = {}
        _ip("netns", "add", self.switch)
        _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "br0", "up")

    def ns(self, host: str) -> str:
        return f"{self.prefix}-{host}"

    def add(self, host: str, number: int) -> str:
        """A host at 10.60.0.<number>, plugged into the switch by its own link."""
        ns, address = self.ns(host), f"{SUBNET}.{number}"
        _ip("netns", "add", ns)
        _ip("-n", self.switch, "link", "add", f"v{host}", "type", "veth", "peer", "name", "eth0", "netns", ns)
        _ip("-n", self.switch, "link", "set", f"v{host}", "master", "br0", "up")
        _ip("-n", ns, "addr", "add", f"{address}/24", "dev", "eth0")
        _ip("-n", ns, "link", "set", "eth0", "up")
        _ip("-n", ns, "link", "set", "lo", "up")
        self.hosts[host] = address
        return address

    def run(self, host: str, argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
        """A process on `host` (its own session, so it and its children can be signalled together)."""
        with open(log, "ab") as out:
            return subprocess.Popen(["ip", "netns", "exec", self.ns(host), *argv], env=env, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True)

    def exec(self, host: str, argv: list[str], input: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(["ip", "netns", "exec", self.ns(host), *argv], capture_output=True, text=True,
                              input=input)

    def cut(self, host: str) -> None:
        """The host's link unplugged at the switch: its packets go nowhere, its connections stay open."""
        _ip("-n", self.switch, "link", "set", f"v{host}", "down")

    def heal(self, host: str) -> None:
        _ip("-n", self.switch, "link", "set", f"v{host}", "up")

    def lose(self, host: str) -> None:
        """The host lost whole: unplugged, then every process on it SIGKILLed (nothing it
        sends on dying reaches anyone, as when a machine goes)."""
        self.cut(host)
        kill_all_in(self.ns(host))

    def impair(self, host: str, delay_ms: int, loss_percent: float, netem: bool) -> str:
        """Delay and loss on what the host sends (a round trip between two impaired hosts
        takes twice the delay): tc netem on its end of the link; where the kernel has no
        netem, the delay by a queue in user space (tests/cluster/delay.py, fed by
        iptables' NFQUEUE) and the loss by nftables.  Returns how, for the history."""
        if netem:
            spec = ["delay", f"{delay_ms}ms", "loss", f"{loss_percent}%"]
            done = self.exec(host, ["tc", "qdisc", "replace", "dev", "eth0", "root", "netem", *spec])
            if done.returncode != 0:
                raise RuntimeError(f"tc refused netem: {done.stderr.strip()}")
            how = f"netem {delay_ms} ms + {loss_percent}% loss on what each host sends"
        else:
            self.delay(host, delay_ms)
            drop = f"numgen random mod 1000 < {int(loss_percent * 10)} drop"
            rules = (f"table inet chaos {{\n chain out {{\n type filter hook output priority 0;\n"
                     f" oifname \"eth0\" {drop}\n }}\n}}\n")
            done = self.exec(host, ["nft", "-f", "-"], input=rules)
            if done.returncode != 0:
                raise RuntimeError(f"nft refused the loss rules: {done.stderr.strip()}")
            how = (f"{delay_ms} ms (a queue in user space: no sch_netem in this kernel) + {loss_percent}% loss "
                   f"(nftables) on what each host sends")
        self.impaired[host] = how
        return how

    def delay(self, host: str, delay_ms: int, match: str = "-o eth0", queue: int = 0) -> None:
        """What `host` sends that iptables' `match` picks (all it sends through eth0 by
        default) held `delay_ms` by tests/cluster/delay.py on queue `queue` (bound before
        the rule feeds it; the rule's --queue-bypass lets packets pass undelayed should it go)."""
        import sys

        delayer = subprocess.Popen(["ip", "netns", "exec", self.ns(host), sys.executable, "-m",
                                    "tests.cluster.delay", str(delay_ms), str(queue)], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2],
                                   start_new_session=True)
        if delayer.stdout.readline().strip() != "ready":  # type: ignore[union-attr]
            delayer.kill()
            raise RuntimeError(f"the delay queue did not start on {host}: {delayer.communicate()[1].strip()}")
        rule = ["OUTPUT", *match.split(), "-j", "NFQUEUE", "--queue-num", str(queue), "--queue-bypass"]
        self.delayers[(host, queue)] = (delayer, rule)
        done = self.exec(host, ["iptables", "-A", *rule])
        if done.returncode != 0:
            raise RuntimeError(f"iptables refused the NFQUEUE rule: {done.stderr.strip()}")

    def undelay(self, host: str, queue: int = 0, drop: bool = False) -> None:
        """The delay on `host`'s queue `queue` taken away: what it holds let go, or, with
        `drop`, lost (the queue killed first: as a host that goes loses what is on the wire)."""
        entry = self.delayers.pop((host, queue), None)
        if entry is None:
            return
        delayer, rule = entry
        if drop:
            delayer.kill()
            delayer.wait()
        self.exec(host, ["iptables", "-D", *rule])
        if not drop:
            delayer.terminate()  # lets what it holds go, then exits
            try:
                delayer.wait(timeout=5)
            except subprocess.TimeoutExpired:
                delayer.kill()

    def block(self, host: str, match: str, on: bool = True) -> None:
        """What `host` sends that iptables' `match` picks dropped (`on`), or no longer."""
        rule = ["OUTPUT", *match.split(), "-j", "DROP"]
        done = self.exec(host, ["iptables", "-I" if on else "-D", *rule])
        if on and done.returncode != 0:
            raise RuntimeError(f"iptables refused the DROP rule: {done.stderr.strip()}")

    def dead_delayers(self) -> dict[str, str]:
        """Hosts whose delay queue exited while it should hold their packets, and what it said."""
        return {h: (p.stderr.read() if p.stderr else "").strip()[-300:] for (h, _), (p, _) in self.delayers.items()
                if p.poll() is not None}

    def unimpair(self, host: str) -> None:
        self.exec(host, ["tc", "qdisc", "del", "dev", "eth0", "root"])
        self.exec(host, ["nft", "delete", "table", "inet", "chaos"])
        self.undelay(host)
        self.impaired.pop(host, None)

    def close(self) -> None:
        """Every process of every host killed, every namespace removed (links go with them)."""
        for host in list(self.hosts):
            remove(self.ns(host))
        remove(self.switch)
        self.hosts.clear()
