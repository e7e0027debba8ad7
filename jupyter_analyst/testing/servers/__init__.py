"""Throwaway real services for tests: PostgreSQL, an S3-compatible server (moto), JupyterHub,
Jupyter Enterprise Gateway, and a Jupyter server with the extension. Each binds to loopback on
a free port and is stopped by the test that started it. Test infrastructure, not part of what
users rely on (that is the scripted model, in ``jupyter_analyst.testing``)."""

#: Nothing: tests import the modules themselves, and no module of the package imports any.
__all__: list[str] = []
