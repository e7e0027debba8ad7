"""Artifacts: content-addressed blobs, the inventory, fingerprints and the step ledger, and
an artifact's preview as a notebook output shows it."""

from .blobs import Blobs, open_blob_store, register_blob_store
from .deterministic import content_fingerprint
from .fingerprints import canonical_python, sha256_file, step_key
from .inventory import ArtifactStore
from .model import Artifact, ArtifactNotFound, ArtifactType, StepRecord
from .preview import MAX_PREVIEW_ROWS, PREVIEW_ROWS, table_bundle
from .preview import preview as preview_artifact

__all__ = [
    "MAX_PREVIEW_ROWS",
    "PREVIEW_ROWS",
    "Artifact",
    "ArtifactNotFound",
    "ArtifactStore",
    "ArtifactType",
    "Blobs",
    "StepRecord",
    "canonical_python",
    "content_fingerprint",
    "open_blob_store",
    "preview_artifact",
    "register_blob_store",
    "sha256_file",
    "step_key",
    "table_bundle",
]
