"""How long a cold ``import harness`` takes, next to ``pydantic`` alone.

A learner pays the import on every kernel restart, and the package promises to stay
light: ``openai`` is imported only when an `OpenAIModel` is made, ``ipywidgets`` only
by the panel. Each figure is the median and the minimum of fresh interpreters, timed
from inside (so interpreter start-up is not counted)::

    python benchmarks/import_time.py            # 7 runs each
    python benchmarks/import_time.py --runs 15
    python -X importtime -c "import harness" 2> import.log   # where the time goes

Exits 0 either way and prints PASS or OVER against the 200 ms target.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

TARGET_MS = 200.0
ROOT = Path(__file__).resolve().parent.parent
TIMER = "import time; t = time.perf_counter(); {stmt}; print(time.perf_counter() - t)"
SUBJECTS = {
    "import harness": "import harness",
    "import pydantic": "import pydantic",
    "from pydantic import BaseModel": "from pydantic import BaseModel",
    "import openai (for scale)": "import openai",
}


def cold_import_ms(stmt: str) -> float:
    """Milliseconds ``stmt`` takes in a fresh interpreter started at the repository root."""
    code = TIMER.format(stmt=stmt)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    return float(out) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh interpreters per subject")
    args = parser.parse_args(argv)
    cold_import_ms("import harness")  # warm the file cache and the .pyc files first
    results = {}
    for label, stmt in SUBJECTS.items():
        times = [cold_import_ms(stmt) for _ in range(args.runs)]
        results[label] = statistics.median(times)
        print(f"{label:32} median {results[label]:6.1f} ms   min {min(times):6.1f} ms")
    verdict = "PASS" if results["import harness"] <= TARGET_MS else "OVER"
    print(f"{verdict}: import harness median {results['import harness']:.1f} ms "
          f"(target <= {TARGET_MS:.0f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
