"""Exact token counts from a helper process, so a big import counts on another core.

Why a process, not a thread: tiktoken releases the GIL while it encodes, but takes it back after every
text. Beside an importer that parses JSON and feeds SQLite (Python code, holding the GIL), a counting
thread waits for the GIL after each message: measured on 2 cores, the thread counted 2.5x slower than
alone and the import as a whole gained nothing. A process has its own interpreter and GIL.

The helper is this module run as `python -m embeddings.token_worker`. It builds a TokenCounter for the
same encoding, reports whether its counts are exact, then answers each list of texts with their counts
(pickles over its stdin and stdout) until its stdin closes, so it also ends when the importer dies.
A helper that cannot start, reports a different tokenizer, or dies is not used: `counts()` returns None
and the caller counts in its own process. The counts are the same either way (`TokenCounter.count_many`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import signal
import subprocess
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import IO, Any

from embeddings.tokens import TokenCounter

log = logging.getLogger(__name__)

START_TIMEOUT_S = 15.0  # it starts in about half a second
ANSWER_TIMEOUT_S = 120.0  # per batch, once started; a batch takes well under a second


class TokenCountProcess:
    """A helper process counting tokens for `counter`'s encoding; batches are answered in order.

    `submit(texts)` returns at once; `counts(future)` gives the counts, or None when the helper is not
    usable (then count in process). The first answer waits for the helper to start: counting the first
    batch here as well would mean loading a second encoder, and on a busy machine the same work twice.
    """

    def __init__(self, counter: TokenCounter, bpe_file: str | None = None) -> None:
        self.encoding = counter.encoding_name
        self.problem: str | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._closed = False
        # One I/O thread: it writes a batch, then reads its answer (blocking I/O, without the GIL).
        self._io = ThreadPoolExecutor(1, thread_name_prefix="memapp-tokens")
        self._started = self._io.submit(self._start, bpe_file)

    # -- the importer's side -------------------------------------------------------------------------

    @property
    def starting(self) -> bool:
        """Not answering yet (it takes about half a second to start): the importer can read ahead."""
        return not self._started.done()

    def submit(self, texts: list[str]) -> Future[list[int]] | None:
        if self.problem is not None:
            return None
        try:
            return self._io.submit(self._ask, texts)
        except RuntimeError:  # closed
            return None

    def counts(self, future: Future[list[int]] | None) -> list[int] | None:
        """The answer for `future`, or None if the helper failed or hung (then count here)."""
        if future is None or self.problem is not None:
            return None
        try:
            try:
                self._started.result(timeout=START_TIMEOUT_S)
            except FutureTimeout:
                raise TimeoutError(f"not started after {START_TIMEOUT_S:g} s") from None
            return future.result(timeout=ANSWER_TIMEOUT_S)
        except Exception as exc:  # stop using it
            self._fail(f"token helper failed: {exc or type(exc).__name__}")
            return None

    def close(self) -> None:
        """End the helper (it holds nothing worth waiting for) and the I/O thread."""
        self._io.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            self._closed = True
            proc = self._proc
        if proc is not None:
            _end(proc)

    # -- on the I/O thread -----------------------------------------------------------------------------

    def _start(self, bpe_file: str | None) -> None:
        root = str(Path(__file__).resolve().parent.parent)  # where `embeddings` is, installed or not
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
        }
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "embeddings.token_worker", self.encoding, bpe_file or ""],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,  # never onto the TUI's terminal
                env=env,
            )
            with self._lock:
                self._proc = proc
                closed = self._closed
            if closed:  # close() ran while it was starting
                _end(proc)
                raise RuntimeError("closed")
            hello = self._read()
        except Exception as exc:
            self._fail(f"token helper did not start: {exc}")
            raise
        if hello != ("ready", self.encoding, True):
            self._fail(f"token helper is not usable: {hello!r}")
            raise RuntimeError(self.problem)

    def _ask(self, texts: list[str]) -> list[int]:
        self._started.result()  # raises if the helper did not start
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        pickle.dump(texts, proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        proc.stdin.flush()
        answer = self._read()
        if not isinstance(answer, list) or len(answer) != len(texts):
            raise RuntimeError(f"token helper answered {type(answer).__name__}")
        return answer

    def _read(self) -> Any:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        return pickle.load(proc.stdout)  # EOFError when the helper is gone

    def _fail(self, problem: str) -> None:
        if self.problem is None:
            self.problem = problem
            log.info("%s; counting tokens in process", problem)
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()


def _end(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()  # an I/O call blocked on it then fails at once, and the I/O thread ends
    proc.wait()
    for pipe in (proc.stdin, proc.stdout):
        with contextlib.suppress(OSError):
            if pipe is not None:
                pipe.close()


# -- the helper process ------------------------------------------------------------------------------


def serve(encoding: str, bpe_file: str, inp: IO[bytes], out: IO[bytes]) -> None:
    counter = TokenCounter(encoding, bpe_file or None)
    counter.load()
    pickle.dump(("ready", counter.encoding_name, counter.exact), out)
    out.flush()
    while True:
        try:
            texts = pickle.load(inp)
        except EOFError:
            return
        pickle.dump(counter.count_many(texts), out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the importer; its closing stdin ends us
    logging.disable(logging.CRITICAL)
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        serve(sys.argv[1], sys.argv[2], sys.stdin.buffer, sys.stdout.buffer)
