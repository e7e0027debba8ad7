"""``python -m jupyter_analyst.server.openapi [--write | --check]`` (``make openapi``): the
description of the server's own routes, printed, written to ``openapi.yaml`` (which the
server serves), or checked against it (a test fails when the file is not what the code
generates)."""

from __future__ import annotations

import argparse
import sys

from ..routes import routes
from .document import SPEC_FILE, build, render


def current() -> str:
    """The description of the server's routes as the code generates it now, as YAML."""
    return render(build(routes("")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jupyter_analyst.server.openapi",
                                     description="The API's OpenAPI 3.1 description, generated from the code.")
    parser.add_argument("--write", action="store_true", help=f"write {SPEC_FILE.name} (else print it)")
    parser.add_argument("--check", action="store_true", help=f"exit 1 when {SPEC_FILE.name} is not current")
    args = parser.parse_args(argv)
    text = current()
    if args.check:
        if SPEC_FILE.read_text(encoding="utf-8") != text:
            print(f"{SPEC_FILE} is not current: run `make openapi`", file=sys.stderr)
            return 1
        return 0
    if args.write:
        SPEC_FILE.write_text(text, encoding="utf-8")
        print(f"wrote {SPEC_FILE}", file=sys.stderr)
        return 0
    sys.stdout.write(text)
    return 0
