"""Artifacts: content-addressed blobs, the inventory, fingerprints and the step ledger."""

from .deterministic import content_fingerprint, normalise_bytes
from .fingerprints import FORMAT_VERSION, canonical_python, sha256_bytes, sha256_file, step_key
from .inventory import ArtifactStore
from .model import Artifact, ArtifactNotFound, ArtifactType, Producer, StepRecord

__all__ = [
    "FORMAT_VERSION",
    "Artifact",
    "ArtifactNotFound",
    "ArtifactStore",
    "ArtifactType",
    "Producer",
    "StepRecord",
    "canonical_python",
    "content_fingerprint",
    "normalise_bytes",
    "sha256_bytes",
    "sha256_file",
    "step_key",
]
