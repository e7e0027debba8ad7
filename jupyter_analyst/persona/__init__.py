"""The Jupyter AI persona "Analyst" (analyst.py): a chat message runs a turn of this product.

Jupyter AI's persona manager loads ``analyst.AnalystPersona`` from the ``jupyter_ai.personas``
entry point; it needs the ``jupyter-ai`` extra, and nothing imports it otherwise (this face
imports nothing). reply.py (a turn's events as one chat message) and host.py (the server's
thread service, and whose threads a chat makes) need no Jupyter AI.
"""

__all__: list[str] = []
