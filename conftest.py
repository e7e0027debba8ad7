"""Doctest collection of the package: the Jupyter AI persona's module imports Jupyter AI's
persona manager, an optional extra (`jupyter-analyst[jupyter-ai]`); without it that module is
not collected (its tests run in .venv-jupyter-ai, see the Makefile)."""

from importlib.util import find_spec

collect_ignore = [] if find_spec("jupyter_ai_persona_manager") else ["jupyter_analyst/persona/analyst.py"]
