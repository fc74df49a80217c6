import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("ENGINE_SHARED_DIR", ROOT.parent / "shared"))
DATA_DIR = SHARED / "datasets"


@pytest.fixture
def data_dir() -> Path:
    if not DATA_DIR.is_dir():
        pytest.skip(f"real data not found at {DATA_DIR} (set ENGINE_SHARED_DIR to the folder holding datasets/)")
    return DATA_DIR
