"""What the server's tests share: a scripted model replaying the test module's ``SCRIPT``,
and a real Jupyter server with the extension on the sample source answering with it."""

from __future__ import annotations

import pytest

from jupyter_analyst.testing import ScriptedModelServer
from jupyter_analyst.testing.servers.jupyter import analyst_server_config


@pytest.fixture
def scripted(request):
    with ScriptedModelServer(request.module.SCRIPT) as server:
        yield server


@pytest.fixture
def jp_server_config(tmp_path, sales_db, scripted):
    return analyst_server_config(tmp_path / "ws", {"sales": str(sales_db)}, scripted.base_url)
