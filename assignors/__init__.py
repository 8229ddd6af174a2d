"""The planning core: Kafka's assignors and everything around them, as plain Python.

The hot modules may be compiled in place by mypyc (`make core`, `tools/build_core.py`);
Python then imports the extension instead of the `.py`. A compiled module older than its
source would silently run old code, so importing the package refuses it.
"""

from __future__ import annotations

from pathlib import Path


def _check_compiled() -> None:
    here = Path(__file__).parent
    for ext in here.rglob("*.so"):
        source = ext.with_name(ext.name.split(".", 1)[0] + ".py")  # range.cpython-311-….so
        if source.exists() and source.stat().st_mtime > ext.stat().st_mtime:
            raise ImportError(
                f"{ext} is older than {source.name}: run `make core` to compile the "
                "edited source, or `make clean-core` to run the pure-Python modules"
            )


_check_compiled()
