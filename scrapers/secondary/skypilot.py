"""SkyPilot's public catalog CSVs as a second source for AWS, Azure and Google Cloud prices.

Source: ``skypilot-org/skypilot-catalog``, ``catalogs/<schema>/<cloud>/vms.csv``, the files SkyPilot's
clients download (``sky/skylet/constants.py``: ``HOSTED_CATALOG_DIR_URL`` =
``https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs``, schema ``v8``).
One row per instance type and zone (AWS, GCP) or region (Azure): ``InstanceType``,
``AcceleratorName``, ``AcceleratorCount``, ``Price`` (on-demand USD/hour), ``SpotPrice``,
``Region``, ``AvailabilityZone``; the column order differs per cloud, so columns are read by name.

Google Cloud rows price the host and the GPUs apart (as Google bills them): a row with an
``InstanceType`` and no accelerator is the machine's vCPUs and memory, a row with an
``AcceleratorName`` and no ``InstanceType`` is that many GPUs in a zone. A GPU machine costs their
sum (``a2-highgpu-1g`` in us-central1: 0.73948 + 2.93391 for one ``A100``). AWS and Azure rows
name the instance's accelerator and price the whole instance.

Pure: text in, rows and figures out; the cross-check service maps names and compares.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal, InvalidOperation

from scrapers.base import FetchError, HttpClient, Page, ParseError

SOURCE = "SkyPilot catalog"
REPOSITORY = "skypilot-org/skypilot-catalog"
# Columns every cloud's vms.csv carries; a renamed one must fail loudly, not compare nothing.
REQUIRED_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")
PRICE_COLUMNS = {"on_demand": "Price", "spot": "SpotPrice"}
# Google's TPUs are listed as accelerators too; they are not GPUs and no catalog entry needs them.
NON_GPU_PREFIXES = ("tpu-",)
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
# "n1-standard-8+1xT4": an N1 machine with GPUs attached (the catalog's name for the pair).
_ATTACHED = re.compile(r"^(?P<vm>[^+]+)\+(?P<count>\d+)x(?P<gpu>.+)$")


@dataclass(frozen=True)
class CatalogRow:
    """One row of a vms.csv: a machine (or, on Google Cloud, a host or a GPU set) in one zone."""

    instance_type: str
    accelerator_name: str
    accelerator_count: Decimal | None
    region: str
    zone: str
    prices: dict[str, Decimal] = field(default_factory=dict)  # pricing model -> USD per hour


@dataclass(frozen=True)
class SourceVersion:
    """Which version of the file was read: its commit and that commit's date when known."""

    url: str
    commit: str = ""
    date: datetime | None = None


def _number(value: str, what: str) -> Decimal | None:
    text = (value or "").strip()
    if not text:
        return None
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise ParseError(f"{what} is not a number: {text!r}") from None
    if not number.is_finite() or number < 0:
        raise ParseError(f"{what} is not a price: {text!r}")
    return number


def parse_vms_csv(text: str) -> list[CatalogRow]:
    """Every row of a SkyPilot vms.csv; ParseError when it is not one (HTML, missing columns)."""
    if text.lstrip().startswith("<"):
        raise ParseError("expected CSV, got HTML/XML")
    reader = csv.DictReader(io.StringIO(text))
    missing = [name for name in REQUIRED_COLUMNS if name not in (reader.fieldnames or [])]
    if missing:
        raise ParseError(f"not a SkyPilot vms.csv: no column(s) {', '.join(missing)}")
    rows = []
    for number, row in enumerate(reader, start=2):
        if None in row:  # more cells than the header names: a broken or truncated line
            raise ParseError(f"line {number} has more cells than the header")
        where = f"line {number} ({row['InstanceType'] or row['AcceleratorName']})"
        prices = {}
        for model, column in PRICE_COLUMNS.items():
            figure = _number(row.get(column) or "", f"{where}: {column}")
            if figure is not None:
                prices[model] = figure
        rows.append(
            CatalogRow(
                instance_type=(row["InstanceType"] or "").strip(),
                accelerator_name=(row["AcceleratorName"] or "").strip(),
                accelerator_count=_number(row["AcceleratorCount"], f"{where}: AcceleratorCount"),
                region=(row["Region"] or "").strip(),
                zone=(row.get("AvailabilityZone") or "").strip(),
                prices=prices,
            )
        )
    if not rows:
        raise ParseError("the CSV has a header and no rows")
    return rows


def is_gpu_accelerator(name: str) -> bool:
    return bool(name) and not name.lower().startswith(NON_GPU_PREFIXES)


@dataclass
class CatalogTable:
    """Rows indexed for lookups: whole machines or hosts by (instance type, region), GPU sets by
    (accelerator, count, region)."""

    machines: dict[tuple[str, str], list[CatalogRow]]
    accelerators: dict[tuple[str, Decimal, str], list[CatalogRow]]

    @classmethod
    def of(cls, rows: Iterable[CatalogRow]) -> CatalogTable:
        machines: dict[tuple[str, str], list[CatalogRow]] = {}
        accelerators: dict[tuple[str, Decimal, str], list[CatalogRow]] = {}
        for row in rows:
            if row.instance_type:
                machines.setdefault((row.instance_type, row.region), []).append(row)
            elif row.accelerator_name and row.accelerator_count is not None:
                key = (row.accelerator_name, row.accelerator_count, row.region)
                accelerators.setdefault(key, []).append(row)
        return cls(machines, accelerators)

    def accelerator_names(self) -> set[str]:
        return {name for name, _, _ in self.accelerators}

    def machine_figures(
        self,
        *,
        instance_type: str,
        region: str,
        pricing_model: str,
        gpu_count: Decimal,
        accelerator_for: Callable[[str], str | None],
    ) -> dict[str, Decimal]:
        """USD per hour of a whole machine in each zone of ``region`` the source prices; {} when it
        prices none.

        A row naming its accelerator prices the whole machine (AWS, Azure). A host row without
        one (Google Cloud) is added zone by zone to the GPU set ``accelerator_for(hint)`` names,
        where the hint is the attached GPU of an ``n1-...+1xT4`` name, else the machine name.
        """
        attached = _ATTACHED.match(instance_type)
        vm = attached["vm"] if attached else instance_type
        host = self.machines.get((vm, region), [])
        if not attached and any(row.accelerator_name for row in host):
            return _zone_figures(host, pricing_model)
        if not host:
            return {}
        count = Decimal(attached["count"]) if attached else Decimal(gpu_count)
        accelerator = accelerator_for(attached["gpu"] if attached else instance_type)
        if accelerator is None:
            return {}
        # Decimal keys: 8 and 8.0 are the same key (equal values hash alike).
        gpus = _zone_figures(self.accelerators.get((accelerator, count, region), []), pricing_model)
        hosts = _zone_figures(host, pricing_model)
        return {zone: hosts[zone] + gpus[zone] for zone in hosts.keys() & gpus.keys()}


def _zone_figures(rows: Iterable[CatalogRow], pricing_model: str) -> dict[str, Decimal]:
    """{zone (or region where the source has no zones): figure} for one pricing model."""
    figures = {}
    for row in rows:
        if pricing_model in row.prices:
            figures[row.zone or row.region] = row.prices[pricing_model]
    return figures


def pick_accelerator(
    candidates: Iterable[str], hint: str, *, fold: Callable[[str], str]
) -> str | None:
    """Of the source's accelerator names that map to the machine's GPU, the one meant here.

    One candidate is taken as it is. Several (Google's ``H100`` and ``H100-MEGA`` are both H100
    SXM parts, priced differently): the one whose folded name is the longest word prefix of the
    folded hint (``a3-megagpu-8g`` -> ``nvidia-h100-mega-80gb`` -> ``H100-MEGA``); None when that
    does not single one out.
    """
    names = sorted(set(candidates))
    if len(names) == 1:
        return names[0]
    hint_words = fold(hint).split()
    best: list[tuple[int, str]] = []
    for name in names:
        words = fold(name).split()
        if words and hint_words[: len(words)] == words:
            best.append((len(words), name))
    best.sort(reverse=True)
    if not best or (len(best) > 1 and best[0][0] == best[1][0]):
        return None
    return best[0][1]


# --- Fetching ------------------------------------------------------------------------------


def csv_url(raw_base: str, ref: str, path: str) -> str:
    return f"{raw_base.rstrip('/')}/{ref}/{path.lstrip('/')}"


def blob_url(commit: str, path: str) -> str:
    """Where a reader finds the file at that commit on GitHub (a price's source URL)."""
    return f"https://github.com/{REPOSITORY}/blob/{commit}/{path.lstrip('/')}"


def commit_lookup(
    client: HttpClient, api_base: str, path: str, ref: str
) -> tuple[str, datetime | None]:
    """The newest commit of ``path`` on ``ref`` and its date, from the GitHub commits API
    (``GET /repos/{owner}/{repo}/commits?path=...&sha=...&per_page=1``)."""
    page = client.get(
        f"{api_base.rstrip('/')}/commits", params={"path": path, "sha": ref, "per_page": "1"}
    )
    try:
        data = json.loads(page.body)
        sha = data[0]["sha"]
        stamp = data[0]["commit"]["committer"]["date"]
    except (ValueError, LookupError, TypeError) as exc:
        raise ParseError(f"unexpected commits API answer: {exc!r}") from None
    if not isinstance(sha, str) or not _COMMIT.match(sha):
        raise ParseError(f"commits API gave no commit id: {sha!r}")
    try:
        date = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        date = None
    return sha, date


def fetch_vms_csv(
    client: HttpClient, *, raw_base: str, api_base: str, ref: str, path: str
) -> tuple[Page, SourceVersion, list[str]]:
    """The file, the version read and warnings. With an API base the newest commit is looked up
    first and the file is read at that commit, so what is recorded is what was compared; when
    the lookup fails the file is read at ``ref`` and the commit stays unknown (a warning)."""
    warnings: list[str] = []
    commit, date = (ref, None) if _COMMIT.match(ref) else ("", None)
    if not commit and api_base:
        try:
            commit, date = commit_lookup(client, api_base, path, ref)
        except (FetchError, ParseError) as exc:  # provenance is best effort; the prices are not
            warnings.append(f"commit of {path} on {ref} not known: {exc}")
    url = csv_url(raw_base, commit or ref, path)
    page = client.get(url)
    return page, SourceVersion(url=url, commit=commit, date=date), warnings
