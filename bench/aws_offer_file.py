"""Writes a synthetic AWS EC2 offer file of a chosen size in the real Price List format.

    .venv/bin/python bench/aws_offer_file.py --size-mb 500 --out /tmp/aws-offer-500.json

The layout and field names are those of the AWS Price List bulk API's service offer file for
``AmazonEC2`` (AWS documentation, "Reading the offer files" and "Service offer file" in the
Price List user guide, read 2026-11) and of the recorded pages in tests/scrapers/pages/aws/:
``formatVersion``, ``disclaimer``, ``offerCode``, ``version``, ``publicationDate``, then
``products`` (SKU -> ``sku``, ``productFamily``, ``attributes``), then ``terms.OnDemand`` and
``terms.Reserved`` (SKU -> offer term code -> ``offerTermCode``, ``sku``, ``effectiveDate``,
``priceDimensions`` with ``rateCode``, ``description``, ``beginRange``, ``endRange``, ``unit``,
``pricePerUnit.USD``, ``appliesTo``, and ``termAttributes``), written as AWS writes it: two-space
indent, a space either side of every colon, prices as 10-decimal strings.

What fills it is synthetic (not AWS figures): like a real region file, most products are not GPU
instances and most GPU instance products are variants the scraper must skip. Each instance type
appears as every operating system / pre-installed software / licence combination, in shared,
dedicated and host tenancy, with the capacity-reservation variants, and each shared and
dedicated product has the twelve reserved terms (1 and 3 years, standard and convertible, no,
partial and all upfront). The GPU families the scraper maps come once each with their real
sizes; non-GPU families are added until the file reaches the size asked for. SKUs are random
(seeded), so two runs with the same arguments write the same bytes.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TextIO

REGION = ("us-east-1", "US East (N. Virginia)")

# GPU families as the scraper maps them (scrapers/providers/aws.py GPU_FAMILIES) and ones it does
# not (AMD, Graviton, Gaudi): family -> [(size, vcpu, memory GiB, gpus, gpu memory GiB)].
GPU_TYPES: dict[str, list[tuple[str, int, int, int, int]]] = {
    "g4dn": [
        ("xlarge", 4, 16, 1, 16),
        ("2xlarge", 8, 32, 1, 16),
        ("4xlarge", 16, 64, 1, 16),
        ("8xlarge", 32, 128, 1, 16),
        ("12xlarge", 48, 192, 4, 64),
        ("16xlarge", 64, 256, 1, 16),
        ("metal", 96, 384, 8, 128),
    ],
    "g5": [
        ("xlarge", 4, 16, 1, 24),
        ("2xlarge", 8, 32, 1, 24),
        ("4xlarge", 16, 64, 1, 24),
        ("8xlarge", 32, 128, 1, 24),
        ("12xlarge", 48, 192, 4, 96),
        ("16xlarge", 64, 256, 1, 24),
        ("24xlarge", 96, 384, 4, 96),
        ("48xlarge", 192, 768, 8, 192),
    ],
    "g6": [
        ("xlarge", 4, 16, 1, 24),
        ("2xlarge", 8, 32, 1, 24),
        ("4xlarge", 16, 64, 1, 24),
        ("12xlarge", 48, 192, 4, 96),
        ("48xlarge", 192, 768, 8, 192),
    ],
    "gr6": [("4xlarge", 16, 128, 1, 24), ("8xlarge", 32, 256, 1, 24)],
    "g6e": [
        ("xlarge", 4, 32, 1, 48),
        ("12xlarge", 48, 384, 4, 192),
        ("48xlarge", 192, 1536, 8, 384),
    ],
    "p3": [("2xlarge", 8, 61, 1, 16), ("8xlarge", 32, 244, 4, 64), ("16xlarge", 64, 488, 8, 128)],
    "p3dn": [("24xlarge", 96, 768, 8, 256)],
    "p4d": [("24xlarge", 96, 1152, 8, 320)],
    "p4de": [("24xlarge", 96, 1152, 8, 640)],
    "p5": [("4xlarge", 16, 256, 1, 80), ("48xlarge", 192, 2048, 8, 640)],
    "p5e": [("48xlarge", 192, 2048, 8, 1128)],
    "p5en": [("48xlarge", 192, 2048, 8, 1128)],
    "p6-b200": [("48xlarge", 192, 2048, 8, 1432)],
    "g4ad": [("xlarge", 4, 16, 1, 8), ("16xlarge", 64, 256, 4, 32)],
    "g5g": [("xlarge", 4, 8, 1, 16), ("16xlarge", 64, 128, 2, 32)],
    "dl1": [("24xlarge", 96, 768, 8, 256)],
}
# Non-GPU families: base names with the suffixes EC2 uses (a, d, n, ...), and their sizes.
BASES = ("m5", "m6i", "m7i", "c5", "c6i", "c7i", "r5", "r6i", "r7i", "x2i", "z1", "i4i", "t3")
SUFFIXES = ("", "a", "d", "n", "dn", "zn", "ad", "in", "idn", "g", "gd", "gn", "e", "flex")
SIZES = (
    ("large", 2, 8),
    ("xlarge", 4, 16),
    ("2xlarge", 8, 32),
    ("4xlarge", 16, 64),
    ("8xlarge", 32, 128),
    ("12xlarge", 48, 192),
    ("16xlarge", 64, 256),
    ("24xlarge", 96, 384),
    ("metal", 96, 384),
)
# operatingSystem, preInstalledSw, licenseModel, operation, price factor.
SOFTWARE = (
    ("Linux", "NA", "No License required", "RunInstances", 1.0),
    ("Linux", "SQL Web", "No License required", "RunInstances:0200", 1.08),
    ("Linux", "SQL Std", "No License required", "RunInstances:0004", 1.6),
    ("Linux", "SQL Ent", "No License required", "RunInstances:0100", 2.9),
    ("RHEL", "NA", "No License required", "RunInstances:0010", 1.06),
    ("Red Hat Enterprise Linux with HA", "NA", "No License required", "RunInstances:1010", 1.1),
    ("SUSE", "NA", "No License required", "RunInstances:000g", 1.12),
    ("Ubuntu Pro", "NA", "No License required", "RunInstances:0g00", 1.02),
    ("Windows", "NA", "No License required", "RunInstances:0002", 1.4),
    ("Windows", "SQL Web", "No License required", "RunInstances:0202", 1.5),
    ("Windows", "SQL Std", "No License required", "RunInstances:0006", 2.1),
    ("Windows", "SQL Ent", "No License required", "RunInstances:0102", 3.4),
    ("Windows", "NA", "Bring your own license", "RunInstances:0800", 1.0),
)
# tenancy, capacitystatus, usage type prefix, price factor.
PLACEMENTS = (
    ("Shared", "Used", "BoxUsage", 1.0),
    ("Shared", "AllocatedCapacityReservation", "Reservation", 1.0),
    ("Shared", "UnusedCapacityReservation", "UnusedBox", 1.0),
    ("Dedicated", "Used", "DedicatedUsage", 1.1),
    ("Dedicated", "AllocatedCapacityReservation", "DedicatedRes", 1.1),
    ("Dedicated", "UnusedCapacityReservation", "UnusedDed", 1.1),
    ("Host", "Used", "HostUsage", 1.0),
)
# (length, class, option) -> offer term code, hourly factor, upfront hours.
RESERVED = (
    ("1yr", "standard", "No Upfront", "4NA7Y494T4", 0.63, 0),
    ("1yr", "standard", "Partial Upfront", "HU7G6KETJZ", 0.30, 4380),
    ("1yr", "standard", "All Upfront", "6QCMYABX3D", 0.0, 8760),
    ("3yr", "standard", "No Upfront", "BPH4J8HBKS", 0.43, 0),
    ("3yr", "standard", "Partial Upfront", "38NPMPTW36", 0.20, 13140),
    ("3yr", "standard", "All Upfront", "NQ3QZPMQV9", 0.0, 26280),
    ("1yr", "convertible", "No Upfront", "7NE97W5U4E", 0.72, 0),
    ("1yr", "convertible", "Partial Upfront", "Z2E3P23VKM", 0.35, 4380),
    ("1yr", "convertible", "All Upfront", "VJWZNREJX2", 0.0, 8760),
    ("3yr", "convertible", "No Upfront", "7NE97W5U4F", 0.50, 0),
    ("3yr", "convertible", "Partial Upfront", "R5XV2EPZQW", 0.24, 13140),
    ("3yr", "convertible", "All Upfront", "MZU6U2429S", 0.0, 26280),
)
ON_DEMAND_CODE = "JRTCKXETXF"
HOURLY_RATE = "6YS6EN2CT7"
UPFRONT_RATE = "2TG2D8R56U"
EFFECTIVE = "2026-11-01T00:00:00Z"
ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"


@dataclass(frozen=True)
class Product:
    sku: str
    instance_type: str
    vcpu: int
    memory: int
    gpus: int
    gpu_memory: int
    software: tuple
    placement: tuple
    hourly: float


def _instance_types(rng: random.Random) -> Iterator[tuple[str, int, int, int, int, float]]:
    """GPU types once each, then non-GPU types without end (the writer stops at the size)."""
    for family, sizes in GPU_TYPES.items():
        for size, vcpu, memory, gpus, gpu_memory in sizes:
            yield f"{family}.{size}", vcpu, memory, gpus, gpu_memory, gpus * rng.uniform(0.5, 6.0)
    generation = 0
    while True:
        for base in BASES:
            for suffix in SUFFIXES:
                family = base + suffix + ("" if generation == 0 else f"-v{generation}")
                for size, vcpu, memory in SIZES:
                    yield f"{family}.{size}", vcpu, memory, 0, 0, vcpu * rng.uniform(0.03, 0.06)
        generation += 1


def _products(rng: random.Random) -> Iterator[Product]:
    for itype, vcpu, memory, gpus, gpu_memory, base in _instance_types(rng):
        for software in SOFTWARE:
            for placement in PLACEMENTS:
                sku = "".join(rng.choice(ALPHABET) for _ in range(16))
                hourly = base * software[4] * placement[3]
                yield Product(
                    sku, itype, vcpu, memory, gpus, gpu_memory, software, placement, hourly
                )


def _price(value: float) -> str:
    return f"{Decimal(repr(value)):.10f}"


def product_text(p: Product) -> str:
    os_name, sw, licence, operation, _ = p.software
    tenancy, capacity, usage, _ = p.placement
    gpu_lines = (
        f'        "gpu" : "{p.gpus}",\n        "gpuMemory" : "{p.gpu_memory} GiB",\n'
        if p.gpus
        else '        "gpuMemory" : "NA",\n'
    )
    label = "GPU instance" if p.gpus else "General purpose"
    return (
        f'    "{p.sku}" : {{\n'
        f'      "sku" : "{p.sku}",\n'
        f'      "productFamily" : "Compute Instance",\n'
        f'      "attributes" : {{\n'
        f'        "servicecode" : "AmazonEC2",\n'
        f'        "location" : "{REGION[1]}",\n'
        f'        "locationType" : "AWS Region",\n'
        f'        "instanceType" : "{p.instance_type}",\n'
        f'        "currentGeneration" : "Yes",\n'
        f'        "instanceFamily" : "{label}",\n'
        f'        "vcpu" : "{p.vcpu}",\n'
        f'        "physicalProcessor" : "Intel Xeon Platinum 8375C (Ice Lake)",\n'
        f'        "clockSpeed" : "3.5 GHz",\n'
        f'        "memory" : "{p.memory} GiB",\n'
        f'        "storage" : "EBS only",\n'
        f'        "networkPerformance" : "Up to 12500 Megabit",\n'
        f'        "processorArchitecture" : "64-bit",\n'
        f'        "tenancy" : "{tenancy}",\n'
        f'        "operatingSystem" : "{os_name}",\n'
        f'        "licenseModel" : "{licence}",\n'
        f'        "usagetype" : "{usage}:{p.instance_type}",\n'
        f'        "operation" : "{operation}",\n'
        f'        "availabilityzone" : "NA",\n'
        f'        "capacitystatus" : "{capacity}",\n'
        f'        "classicnetworkingsupport" : "false",\n'
        f'        "dedicatedEbsThroughput" : "Up to 10000 Mbps",\n'
        f'        "ecu" : "NA",\n'
        f'        "enhancedNetworkingSupported" : "Yes",\n'
        f"{gpu_lines}"
        f'        "instancesku" : "{p.sku[::-1]}",\n'
        f'        "intelAvx2Available" : "Yes",\n'
        f'        "intelAvxAvailable" : "Yes",\n'
        f'        "intelTurboAvailable" : "Yes",\n'
        f'        "marketoption" : "OnDemand",\n'
        f'        "normalizationSizeFactor" : "8",\n'
        f'        "preInstalledSw" : "{sw}",\n'
        f'        "processorFeatures" : "Intel AVX; Intel AVX2; Intel AVX512; Intel Turbo",\n'
        f'        "regionCode" : "{REGION[0]}",\n'
        f'        "servicename" : "Amazon Elastic Compute Cloud",\n'
        f'        "vpcnetworkingsupport" : "true"\n'
        f"      }}\n"
        f"    }}"
    )


def _hourly_dimension(code: str, description: str, price: str) -> str:
    return (
        f'          "{code}.{HOURLY_RATE}" : {{\n'
        f'            "rateCode" : "{code}.{HOURLY_RATE}",\n'
        f'            "description" : "{description}",\n'
        f'            "beginRange" : "0",\n'
        f'            "endRange" : "Inf",\n'
        f'            "unit" : "Hrs",\n'
        f'            "pricePerUnit" : {{\n'
        f'              "USD" : "{price}"\n'
        f"            }},\n"
        f'            "appliesTo" : [ ]\n'
        f"          }}"
    )


def on_demand_text(p: Product) -> str:
    code = f"{p.sku}.{ON_DEMAND_CODE}"
    os_name = p.software[0]
    description = f"${p.hourly:.3f} per On Demand {os_name} {p.instance_type} Instance Hour"
    return (
        f'    "{p.sku}" : {{\n'
        f'      "{code}" : {{\n'
        f'        "offerTermCode" : "{ON_DEMAND_CODE}",\n'
        f'        "sku" : "{p.sku}",\n'
        f'        "effectiveDate" : "{EFFECTIVE}",\n'
        f'        "priceDimensions" : {{\n'
        f"{_hourly_dimension(code, description, _price(round(p.hourly, 4)))}\n"
        f"        }},\n"
        f'        "termAttributes" : {{ }}\n'
        f"      }}\n"
        f"    }}"
    )


def reserved_text(p: Product) -> str:
    terms = []
    description = f"{p.software[0]} (Amazon VPC), {p.instance_type} reserved instance applied"
    for length, offering, option, term_code, factor, upfront_hours in RESERVED:
        code = f"{p.sku}.{term_code}"
        dimensions = []
        if upfront_hours:
            fee = round(p.hourly * upfront_hours * (0.6 if length == "1yr" else 0.4))
            dimensions.append(
                f'          "{code}.{UPFRONT_RATE}" : {{\n'
                f'            "rateCode" : "{code}.{UPFRONT_RATE}",\n'
                f'            "description" : "Upfront Fee",\n'
                f'            "unit" : "Quantity",\n'
                f'            "pricePerUnit" : {{\n'
                f'              "USD" : "{fee}"\n'
                f"            }},\n"
                f'            "appliesTo" : [ ]\n'
                f"          }}"
            )
        dimensions.append(_hourly_dimension(code, description, _price(round(p.hourly * factor, 4))))
        dims = ",\n".join(dimensions)
        terms.append(
            f'      "{code}" : {{\n'
            f'        "offerTermCode" : "{term_code}",\n'
            f'        "sku" : "{p.sku}",\n'
            f'        "effectiveDate" : "{EFFECTIVE}",\n'
            f'        "priceDimensions" : {{\n{dims}\n        }},\n'
            f'        "termAttributes" : {{\n'
            f'          "LeaseContractLength" : "{length}",\n'
            f'          "OfferingClass" : "{offering}",\n'
            f'          "PurchaseOption" : "{option}"\n'
            f"        }}\n"
            f"      }}"
        )
    body = ",\n".join(terms)
    return f'    "{p.sku}" : {{\n{body}\n    }}'


def has_reservations(p: Product) -> bool:
    tenancy, capacity = p.placement[0], p.placement[1]
    return tenancy in ("Shared", "Dedicated") and capacity == "Used"


def _write_joined(fh: TextIO, texts: Iterator[str]) -> None:
    """Write the texts separated by ",\\n" without joining them in memory."""
    for index, text in enumerate(texts):
        if index:
            fh.write(",\n")
        fh.write(text)


def write_offer_file(out: Path, size_mb: float, seed: int = 20261201) -> dict[str, int]:
    """Write the file; return how many products, GPU products and reserved SKUs it holds."""
    rng = random.Random(seed)
    target = int(size_mb * 1024 * 1024)
    # Bytes per product with its terms, measured on the first ones, decide how many to write.
    products: list[Product] = []
    written = 0
    for product in _products(rng):
        products.append(product)
        written += len(product_text(product)) + len(on_demand_text(product)) + 12
        if has_reservations(product):
            written += len(reserved_text(product)) + 4
        if written >= target:
            break
    header = (
        "{\n"
        '  "formatVersion" : "v1.0",\n'
        '  "disclaimer" : "This pricing list is for informational purposes only. All prices are '
        "subject to the additional terms included in the pricing pages on http://aws.amazon.com. "
        'All Free Tier prices are also subject to the terms included at https://aws.amazon.com/free/",\n'
        '  "offerCode" : "AmazonEC2",\n'
        '  "version" : "20261201000000",\n'
        '  "publicationDate" : "2026-12-01T00:00:00Z",\n'
    )
    with out.open("w", encoding="utf-8", buffering=1 << 20) as fh:
        fh.write(header)
        fh.write('  "products" : {\n')
        _write_joined(fh, (product_text(p) for p in products))
        fh.write('\n  },\n  "terms" : {\n    "OnDemand" : {\n')
        _write_joined(fh, (on_demand_text(p) for p in products))
        fh.write('\n    },\n    "Reserved" : {\n')
        _write_joined(fh, (reserved_text(p) for p in products if has_reservations(p)))
        fh.write("\n    }\n  }\n}\n")
    return {
        "products": len(products),
        "gpu_products": sum(1 for p in products if p.gpus),
        "reserved_skus": sum(1 for p in products if has_reservations(p)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=500.0)
    parser.add_argument("--out", type=Path, default=Path("/tmp/aws-offer-500.json"))
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args()
    start = time.perf_counter()
    counts = write_offer_file(args.out, args.size_mb, args.seed)
    size = args.out.stat().st_size
    print(
        f"wrote {args.out}: {size / 1024 / 1024:.0f} MiB, {counts['products']:,} products "
        f"({counts['gpu_products']:,} GPU), {counts['reserved_skus']:,} SKUs with reserved "
        f"terms, in {time.perf_counter() - start:.1f} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
