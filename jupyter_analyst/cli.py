"""Command line (placeholder, replaced by the real CLI)."""


def main() -> int:
    return 0
