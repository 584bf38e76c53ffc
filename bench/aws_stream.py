"""AWS offer file of real size: peak memory and time of the streaming parse (issue 15, item 4).

    .venv/bin/python bench/aws_stream.py                  # 500 MB file, written when missing
    .venv/bin/python bench/aws_stream.py --size-mb 50 --whole   # also json.loads, for contrast

The offer file comes from bench/aws_offer_file.py (the real AmazonEC2 layout, synthetic content).
Each measurement runs in a fresh Python process, so its peak resident memory (ru_maxrss) is the
parse's own plus the interpreter's; the process's resident memory after its imports is printed
as the baseline. Modes:

* ``http``: the scraper's real path. A local ``http.server`` (another process) serves the file
  at the offer file's URL; ``AwsScraper.fetch`` streams it into a spooled temporary file and
  ``parse_pages`` parses it (what a refresh does).
* ``file``: the parse alone, of a page whose spool is the file on disk.
* ``whole`` (``--whole``): ``json.loads`` of the whole file, what the parser did before.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, print_machine

TARGET_PEAK_MIB = 300

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})

def rss_mib():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

mode, path, base_url = {mode!r}, {path!r}, {base_url!r}
from scrapers.base import HttpClient, Page, parse_pages
from scrapers.providers.aws import AwsScraper
baseline = rss_mib()
start = time.perf_counter()
if mode == "http":
    scraper = AwsScraper(base_url=base_url, regions=["us-east-1"])
    with HttpClient(retries=0, timeout_s=300) as client:
        result = parse_pages(scraper, scraper.fetch(client))
    records = result.records
elif mode == "file":
    with open(path, "rb") as fh:
        page = Page(url="file://" + path, status=200, body="", meta={{"region": "us-east-1"}},
                    spool=fh)
        records = AwsScraper().parse(page)
else:
    with open(path, "rb") as fh:
        data = json.loads(fh.read())
    records = [len(data["products"])]
elapsed = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"records": len(records), "seconds": elapsed, "peak_mib": peak,
                  "baseline_mib": baseline}}))
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _measure(mode: str, path: Path, base_url: str = "") -> dict:
    code = CHILD.format(root=str(ROOT), mode=mode, path=str(path), base_url=base_url)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=ROOT
    )
    if out.returncode != 0:
        raise SystemExit(f"{mode} run failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _served(path: Path) -> tuple[subprocess.Popen, str, tempfile.TemporaryDirectory]:
    """An http.server process serving ``path`` at the offer file's URL; (process, base URL)."""
    root = tempfile.TemporaryDirectory(prefix="aws-offer-")
    target = Path(root.name, "aws/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.json")
    target.parent.mkdir(parents=True)
    target.symlink_to(path.resolve())
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=root.name,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    return server, f"http://127.0.0.1:{port}/aws", root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=500.0)
    parser.add_argument("--file", type=Path, help="offer file (default /tmp/aws-offer-<size>.json)")
    parser.add_argument("--modes", default="http,file", help="comma-separated: http, file")
    parser.add_argument("--whole", action="store_true", help="also time json.loads of the file")
    args = parser.parse_args()
    path = args.file or Path(tempfile.gettempdir(), f"aws-offer-{args.size_mb:g}.json")
    if not path.exists():
        from aws_offer_file import write_offer_file

        counts = write_offer_file(path, args.size_mb)
        print(f"wrote {path}: {counts}")
    size_mib = path.stat().st_size / 1024 / 1024
    print_machine(f"AWS offer file streaming parse: {path.name}, {size_mib:.0f} MiB")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    modes = [m for m in args.modes.split(",") if m] + (["whole"] if args.whole else [])
    failed = False
    for mode in modes:
        if mode == "http":
            server, base_url, root = _served(path)
            try:
                result = _measure(mode, path, base_url)
            finally:
                server.terminate()
                server.wait()
                root.cleanup()
        else:
            result = _measure(mode, path)
        ok = result["peak_mib"] < TARGET_PEAK_MIB or mode == "whole"
        failed |= not ok
        print(
            f"{mode:5s}: {result['records']:>7,} records  {result['seconds']:6.1f} s  "
            f"{size_mib / result['seconds']:5.1f} MiB/s  peak RSS {result['peak_mib']:6.0f} MiB "
            f"(after imports {result['baseline_mib']:.0f} MiB)"
            + (
                ""
                if mode == "whole"
                else f"  target < {TARGET_PEAK_MIB} MiB: {'ok' if ok else 'MISSED'}"
            )
        )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
