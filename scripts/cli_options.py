"""Rewrite the generated workload options in clients/gpuatlas.py from sizing/inputs.py.

The CLI is one stdlib-only file that cannot import the service, so its copy of the workload
description is generated (`make schema` runs this); tests/clients checks that it is current.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sizing.inputs import CLI_BEGIN, CLI_END, cli_block  # noqa: E402

CLI_PATH = ROOT / "clients" / "gpuatlas.py"


def rewrite(text: str) -> str:
    """`text` with its generated block replaced by the current one."""
    start = text.index(CLI_BEGIN)
    end = text.index(CLI_END) + len(CLI_END) + 1
    return text[:start] + cli_block() + text[end:]


if __name__ == "__main__":
    CLI_PATH.write_text(rewrite(CLI_PATH.read_text(encoding="utf-8")), encoding="utf-8")
