"""The package's version, in a module of its own so that importing it loads nothing else."""

__version__ = "0.1.0"
