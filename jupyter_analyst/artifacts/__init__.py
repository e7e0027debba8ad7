"""Artifacts: content-addressed blobs, the inventory, fingerprints and the step ledger, and
an artifact's preview as a notebook output shows it, a dataset as CSV, a model-written CSV
file with no cell a spreadsheet runs, the file names downloads are saved under."""

from .blobs import Blobs, open_blob_store, register_blob_store
from .csv_cells import is_spreadsheet_text, neutralised_csv
from .csv_export import dataset_csv
from .deterministic import content_fingerprint
from .fingerprints import canonical_python, sha256_file, step_key
from .inventory import ArtifactStore
from .model import Artifact, ArtifactNotFound, ArtifactType, StepRecord
from .file_names import csv_name, download_name
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
    "csv_name",
    "dataset_csv",
    "download_name",
    "is_spreadsheet_text",
    "neutralised_csv",
    "open_blob_store",
    "preview_artifact",
    "register_blob_store",
    "sha256_file",
    "step_key",
    "table_bundle",
]
