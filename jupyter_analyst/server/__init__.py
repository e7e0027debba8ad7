"""The Jupyter server extension: an authenticated, streamed, resumable analysis API."""

from .app import AnalystApp


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "jupyter_analyst.server", "app": AnalystApp}]


__all__ = ["AnalystApp"]
