"""A fixed delay on what a host sends, for kernels without netem: the host's
packets are queued to this process (iptables' NFQUEUE target on its output)
and let go `delay` milliseconds after each arrived, in order.  It speaks
nfnetlink_queue itself (the standard library only): bind a queue, take each
packet's id (no payload is copied), give verdicts late.

    ip netns exec NS python -m tests.cluster.delay 100 [QUEUE]

Prints "ready" once bound.  On SIGTERM (sent once the rule that feeds it is
deleted) it reads what is still queued, lets every held packet go and exits.
The rule carries --queue-bypass, so packets pass undelayed when no process is
bound; the queue is fail-open, so a packet that finds it full (8,192 held)
passes at once, ahead of those held (the cluster runs hold about a hundred).
Killed (a host lost), it takes what it held with it, as a lost host does.
"""

from __future__ import annotations

import collections
import select
import signal
import socket
import struct
import sys
import time

NETLINK_NETFILTER = 12
SOL_NETLINK = 270
NETLINK_NO_ENOBUFS = 5
SO_RCVBUFFORCE = 33
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2
QUEUE_SUBSYS = 3 << 8  # NFNL_SUBSYS_QUEUE in the high byte of a message's type
MSG_PACKET, MSG_CONFIG, MSG_VERDICT_BATCH = 0, 2, 3
CFG_CMD, CFG_PARAMS, CFG_QUEUE_MAXLEN, CFG_MASK, CFG_FLAGS = 1, 2, 3, 4, 5
CMD_BIND = 1
COPY_META = 1  # a packet's id and metadata, not its bytes
FLAG_FAIL_OPEN = 1
ATTR_PACKET_HDR, ATTR_VERDICT_HDR = 1, 2
NF_ACCEPT = 1
_HEADER = struct.Struct("=IHHII")  # struct nlmsghdr


def _attr(kind: int, payload: bytes) -> bytes:
    raw = struct.pack("=HH", 4 + len(payload), kind) + payload
    return raw + b"\0" * (-len(raw) % 4)


def _message(kind: int, queue: int, attrs: bytes, flags: int = NLM_F_REQUEST, seq: int = 0) -> bytes:
    body = struct.pack("=BBH", socket.AF_UNSPEC, 0, socket.htons(queue)) + attrs  # struct nfgenmsg
    return _HEADER.pack(_HEADER.size + len(body), QUEUE_SUBSYS | kind, flags, seq, 0) + body


def _packet_ids(data: bytes) -> list[int]:
    """The ids of the queued packets a read holds (other messages are skipped)."""
    ids, at = [], 0
    while at + _HEADER.size <= len(data):
        length, kind = _HEADER.unpack_from(data, at)[:2]
        if length < _HEADER.size:
            break
        if kind == QUEUE_SUBSYS | MSG_PACKET:
            a = at + _HEADER.size + 4  # past struct nfgenmsg
            while a + 4 <= at + length:
                alen, atype = struct.unpack_from("=HH", data, a)
                if alen < 4:
                    break
                if atype & 0x7FFF == ATTR_PACKET_HDR:
                    ids.append(struct.unpack_from("!I", data, a + 4)[0])
                    break
                a += (alen + 3) & ~3
        at += (length + 3) & ~3
    return ids


class Queue:
    def __init__(self, number: int = 0) -> None:
        self.number = number
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
        self.sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 16 << 20)
        self.sock.setsockopt(SOL_NETLINK, NETLINK_NO_ENOBUFS, 1)
        self.sock.bind((0, 0))
        self._configure(_attr(CFG_CMD, struct.pack("!BBH", CMD_BIND, 0, socket.AF_INET)))
        self._configure(_attr(CFG_PARAMS, struct.pack("!IB", 0, COPY_META)) +
                        _attr(CFG_QUEUE_MAXLEN, struct.pack("!I", 8192)) +
                        _attr(CFG_MASK, struct.pack("!I", FLAG_FAIL_OPEN)) +
                        _attr(CFG_FLAGS, struct.pack("!I", FLAG_FAIL_OPEN)))

    def _configure(self, attrs: bytes) -> None:
        self.sock.send(_message(MSG_CONFIG, self.number, attrs, NLM_F_REQUEST | NLM_F_ACK, seq=1))
        reply = self.sock.recv(65536)
        length, kind = _HEADER.unpack_from(reply)[:2]
        if kind == NLMSG_ERROR:
            error = struct.unpack_from("=i", reply, _HEADER.size)[0]
            if error:
                raise OSError(-error, f"nfnetlink_queue refused the configuration of queue {self.number}")

    def waiting(self) -> list[int]:
        """The ids of every packet queued and not yet read (one message a packet)."""
        ids: list[int] = []
        while True:
            try:
                ids.extend(_packet_ids(self.sock.recv(1 << 16, socket.MSG_DONTWAIT)))
            except BlockingIOError:
                return ids

    def accept_through(self, packet_id: int) -> None:
        """Every packet held with an id up to `packet_id` let go (ids rise in arrival order)."""
        self.sock.send(_message(MSG_VERDICT_BATCH, self.number,
                                _attr(ATTR_VERDICT_HDR, struct.pack("!II", NF_ACCEPT, packet_id))))


def serve(delay_ms: float, number: int = 0) -> None:
    queue = Queue(number)
    held: collections.deque[tuple[float, int]] = collections.deque()  # (when to let go, id), in order
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    print("ready", flush=True)
    delay = delay_ms / 1000
    while not stopping:
        wait = max(0.0, held[0][0] - time.monotonic()) if held else 1.0
        try:
            readable, _, _ = select.select([queue.sock], [], [], wait)
        except InterruptedError:
            continue
        now = time.monotonic()
        if readable:
            held.extend((now + delay, packet_id) for packet_id in queue.waiting())
        due = None
        while held and held[0][0] <= now:
            due = held.popleft()[1]
        if due is not None:
            queue.accept_through(due)
    # The rule that fed the queue is gone (unimpair deletes it first): take what is still
    # waiting to be read, then let everything go, so that nothing held is dropped.
    held.extend((0.0, packet_id) for packet_id in queue.waiting())
    if held:
        queue.accept_through(held[-1][1])


if __name__ == "__main__":
    serve(float(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 0)
