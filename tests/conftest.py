"""Suite-wide settings; the release's checkpoint layout (``rcrn/models/test_release``) is
importable by the other test modules in any import mode."""

import sys
import warnings
from pathlib import Path

warnings.filterwarnings("ignore", message=".*torch.jit.script.*", category=DeprecationWarning)

_HERE = str(Path(__file__).resolve().parent / "rcrn" / "models")
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
