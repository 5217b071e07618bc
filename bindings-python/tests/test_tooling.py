"""The type stubs check under mypy --strict and match the built module
(stubtest), and the quickstart runs."""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def test_stubs_pass_mypy_strict() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(HERE / "typing_usage.py")],
        capture_output=True, text=True, cwd=HERE,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_stubs_match_the_built_module() -> None:
    """mypy's stubtest compares _native.pyi with the compiled module: every
    method, parameter, default and the class itself."""
    done = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "submetrics._native"],
        capture_output=True, text=True, cwd=ROOT / "bindings-python" / "python",
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_quickstart_runs() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "python" / "quickstart.py")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "2024-03-01" in done.stdout and "8000" in done.stdout


def test_the_extension_is_built_for_the_stable_abi() -> None:
    """One abi3 build serves CPython 3.9 and later: the module file carries
    the stable-ABI tag, not this interpreter's version tag."""
    import submetrics._native as native

    assert Path(native.__file__).name == "_native.abi3.so"
