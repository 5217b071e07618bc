"""Starts a real submetrics-server for the client tests: the binary of
``SUBMETRICS_SERVER_BIN``, else the workspace's debug build (``cargo build
-p submetrics-server``), on a free port with a fresh data directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import List, Optional

ROOT = Path(__file__).resolve().parents[2]
OWNER_KEY = "owner-key-for-client-tests-0123456789"


def binary() -> Path:
    given = os.environ.get("SUBMETRICS_SERVER_BIN")
    if given:
        return Path(given)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    built = target / "debug" / "submetrics-server"
    if not built.exists():
        raise RuntimeError(f"no server binary at {built}: run `cargo build -p submetrics-server` or set SUBMETRICS_SERVER_BIN")
    return built


class Service:
    """A running server: ``url``, the owner ``key`` of its first account,
    and ``keys`` of the further accounts made before it started."""

    def __init__(self, accounts: int = 0) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="submetrics-client-test-"))
        env = dict(os.environ, SUBMETRICS_OWNER_KEY=OWNER_KEY)
        self.key = OWNER_KEY
        self.keys: List[str] = []
        if accounts:
            # Accounts made before the start: the first is the default one.
            for i in range(accounts + 1):
                out = subprocess.run(
                    [str(binary()), "accounts", "create", f"account {i}", "--data-dir", str(self.dir)],
                    env=env, check=True, capture_output=True, text=True,
                ).stdout
                self.keys.append(out.strip().rsplit(" ", 1)[1])
            self.key = self.keys.pop(0)
        self.process = subprocess.Popen(
            [str(binary()), "--listen", "127.0.0.1:0", "--data-dir", str(self.dir)],
            env=env, stdout=subprocess.PIPE, text=True,
        )
        assert self.process.stdout is not None
        self.url: Optional[str] = None
        for line in self.process.stdout:
            if line.startswith("listening on "):
                self.url = line.split(" ", 2)[2].strip()
                break
        if self.url is None:
            raise RuntimeError("the server stopped before it listened")

    def offline(self, *args: str) -> str:
        """Runs an offline subcommand of the server on its database; returns stdout."""
        return subprocess.run(
            [str(binary()), *args, "--data-dir", str(self.dir)], check=True, capture_output=True, text=True
        ).stdout.strip()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        if self.process.stdout:
            self.process.stdout.close()
        shutil.rmtree(self.dir, ignore_errors=True)
