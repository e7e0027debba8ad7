"""The relay between a kernel's sockets and the host's: real ZMQ sockets on both sides."""

from __future__ import annotations

import asyncio

import pytest
import pytest_asyncio
import zmq
import zmq.asyncio

from jupyter_analyst.kernel.sandbox.relay import Relay

pytestmark = pytest.mark.asyncio

LIMIT = 1 << 20


@pytest_asyncio.fixture
async def pubsub(tmp_path):
    """A PUB socket (the kernel's) and a SUB socket (the host's) with a relay between them."""
    ctx = zmq.asyncio.Context()
    relay = Relay(LIMIT)
    await relay.start([(f"{tmp_path}/k-1", f"{tmp_path}/kernel-1")])
    pub = ctx.socket(zmq.PUB)
    pub.bind(f"ipc://{tmp_path}/kernel-1")
    sub = ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.connect(f"ipc://{tmp_path}/k-1")
    # A subscription travels through the relay before anything published is delivered.
    for _ in range(200):
        await pub.send_multipart([b"hello"])
        if await sub.poll(20):
            await sub.recv_multipart()
            break
    else:
        pytest.fail("the subscriber never connected through the relay")
    try:
        yield pub, sub, relay
    finally:
        pub.close(0)
        sub.close(0)
        await relay.stop()
        ctx.term()


async def _received(sub) -> list[bytes]:
    assert await sub.poll(5000), "nothing arrived"
    return await sub.recv_multipart()


async def test_messages_within_the_limit_pass_whole(pubsub):
    pub, sub, relay = pubsub
    while await sub.poll(50):  # the greetings sent while connecting
        await sub.recv_multipart()
    message = [b"topic", b"a" * 1000, b"b" * (LIMIT - 2000)]
    await pub.send_multipart(message)
    assert await _received(sub) == message
    assert relay.take_cut() == 0


async def test_a_message_past_the_limit_is_cut_and_the_next_one_arrives(pubsub):
    pub, sub, relay = pubsub
    while await sub.poll(50):
        await sub.recv_multipart()
    frame = b"x" * (LIMIT // 3)
    await pub.send_multipart([b"topic"] + [frame] * 20, copy=False)  # 20 frames: 6.7 times the limit
    await pub.send_multipart([b"after", b"small"])
    cut = await _received(sub)
    assert cut[-1] == b"" and sum(map(len, cut)) <= LIMIT, "what was passed on ends with an empty frame"
    assert await _received(sub) == [b"after", b"small"]
    assert relay.take_cut() == 1 and relay.take_cut() == 0


async def test_bytes_that_are_not_zmtp_close_the_connection(tmp_path):
    relay = Relay(LIMIT)
    await relay.start([(f"{tmp_path}/k-1", f"{tmp_path}/kernel-1")])
    received: list[bytes] = []

    async def kernel(reader, writer):
        writer.write(b"GET / HTTP/1.1\r\n" + b"x" * 100)
        await writer.drain()

    server = await asyncio.start_unix_server(kernel, path=f"{tmp_path}/kernel-1")
    try:
        reader, writer = await asyncio.open_unix_connection(f"{tmp_path}/k-1")
        while chunk := await asyncio.wait_for(reader.read(1024), 5):
            received.append(chunk)
        writer.close()
    finally:
        server.close()
        await relay.stop()
    assert b"".join(received) == b"", "nothing of a stream that is not ZMTP 3 is passed on"
