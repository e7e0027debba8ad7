"""Artifacts: content-addressed blobs, the inventory, fingerprints and the step ledger."""

from .blobs import Blobs, open_blob_store, register_blob_store
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
    "Blobs",
    "Producer",
    "StepRecord",
    "canonical_python",
    "content_fingerprint",
    "normalise_bytes",
    "open_blob_store",
    "register_blob_store",
    "sha256_bytes",
    "sha256_file",
    "step_key",
]
