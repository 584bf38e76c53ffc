"""Rebuilds the recorded aws pages in this folder (see README.md); deterministic, byte for byte.

Run: PYTHONPATH=. .venv/bin/python tests/scrapers/pages/aws/build_pages.py
"""

import json
import random
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import yaml

random.seed(20261130)
OUT = str(Path(__file__).resolve().parent)
FIXTURE = Path(__file__).resolve().parents[4] / "fixtures" / "providers" / "aws.yaml"
fx = yaml.safe_load(FIXTURE.read_text())
types = {t["name"]: t for t in fx["instance_types"]}
prices = {}
for p in fx["prices"]:
    prices[(p["instance_type"], p["region"], p["pricing_model"])] = p["amount"]
LOC = {
    "us-east-1": ("US East (N. Virginia)", ""),
    "us-west-2": ("US West (Oregon)", "USW2-"),
    "eu-north-1": ("EU (Stockholm)", "EUN1-"),
}


def sku():
    return "".join(random.choice("ABCDEFGHJKMNPQRSTUVWXYZ23456789") for _ in range(16))


GPUMEM = {
    "g4dn": 16,
    "g5": 24,
    "g6": 24,
    "gr6": 24,
    "g6e": 48,
    "p3": 16,
    "p3dn": 32,
    "p4d": 40,
    "p4de": 80,
    "p5": 80,
    "p5en": 141,
    "p6-b200": 179,
    "g4ad": 8,
    "g5g": 16,
}
PROC = {
    "g4dn": "Intel Xeon Family",
    "g5": "AMD EPYC 7R32",
    "g6": "AMD EPYC 7R13 Processor",
    "gr6": "AMD EPYC 7R13 Processor",
    "g6e": "AMD EPYC 7R13 Processor",
    "p3": "Intel Xeon E5-2686 v4 (Broadwell)",
    "p3dn": "Intel Xeon Platinum 8175",
    "p4d": "Intel Xeon Platinum 8275L",
    "p4de": "Intel Xeon Platinum 8275L",
    "p5": "AMD EPYC 7R13 Processor",
    "p5en": "Intel Sapphire Rapids",
    "p6-b200": "Intel Xeon Scalable (Emerald Rapids)",
    "g4ad": "AMD EPYC 7R32",
    "g5g": "AWS Graviton2 Processor",
    "m5": "Intel Xeon Platinum 8175",
}


def fmt(d):
    return f"{Decimal(str(d)):.10f}"


class Offer:
    def __init__(self, region):
        self.region = region
        self.products = {}
        self.od = {}
        self.ri = {}

    def compute(
        self,
        itype,
        vcpu,
        mem,
        gpu=None,
        os_="Linux",
        tenancy="Shared",
        sw="NA",
        cap="Used",
        lic="No License required",
        family_label="GPU instance",
    ):
        s = sku()
        loc, pre = LOC[self.region]
        fam = itype.split(".")[0]
        usage = {"Shared": "BoxUsage", "Dedicated": "DedicatedUsage", "Host": "HostUsage"}[tenancy]
        if cap != "Used":
            usage = {
                "AllocatedCapacityReservation": "Reservation",
                "UnusedCapacityReservation": "UnusedBox",
            }[cap]
        op = {"Linux": "RunInstances", "Windows": "RunInstances:0002", "RHEL": "RunInstances:0010"}[
            os_
        ]
        if sw == "SQL Web":
            op = "RunInstances:0200"
        if lic == "Bring your own license":
            op = "RunInstances:0800"
        a = {
            "servicecode": "AmazonEC2",
            "location": loc,
            "locationType": "AWS Region",
            "instanceType": itype,
            "currentGeneration": "Yes",
            "instanceFamily": family_label,
            "vcpu": str(vcpu),
            "physicalProcessor": PROC.get(fam, "Intel Xeon Family"),
            "memory": f"{mem:g} GiB",
            "storage": "EBS only" if fam in ("p3", "m5") else "1 x 125 NVMe SSD",
            "networkPerformance": "Up to 25 Gigabit",
            "processorArchitecture": "64-bit",
            "tenancy": tenancy,
            "operatingSystem": os_,
            "licenseModel": lic,
            "usagetype": f"{pre}{usage}:{itype}",
            "operation": op,
            "availabilityzone": "NA",
            "capacitystatus": cap,
        }
        if gpu is not None:
            a["gpu"] = str(gpu)
            a["gpuMemory"] = f"{GPUMEM[fam] * gpu:g} GiB" if isinstance(gpu, int) else "NA"
        else:
            a["gpuMemory"] = "NA"
        a.update(
            {
                "marketoption": "OnDemand",
                "normalizationSizeFactor": "8",
                "preInstalledSw": sw,
                "regionCode": self.region,
                "servicename": "Amazon Elastic Compute Cloud",
                "vpcnetworkingsupport": "true",
            }
        )
        self.products[s] = {"sku": s, "productFamily": "Compute Instance", "attributes": a}
        return s

    def other(self, family, attrs):
        s = sku()
        loc, _ = LOC[self.region]
        a = {
            "servicecode": "AmazonEC2",
            "location": loc,
            "locationType": "AWS Region",
            **attrs,
            "regionCode": self.region,
            "servicename": "Amazon Elastic Compute Cloud",
        }
        self.products[s] = {"sku": s, "productFamily": family, "attributes": a}
        return s

    def ondemand(self, s, price, unit="Hrs", desc=None):
        itype = self.products[s]["attributes"].get("instanceType", "")
        code = f"{s}.JRTCKXETXF"
        self.od[s] = {
            code: {
                "offerTermCode": "JRTCKXETXF",
                "sku": s,
                "effectiveDate": "2026-11-01T00:00:00Z",
                "priceDimensions": {
                    f"{code}.6YS6EN2CT7": {
                        "rateCode": f"{code}.6YS6EN2CT7",
                        "description": desc
                        or f"${Decimal(str(price)):.3f} per On Demand Linux {itype} Instance Hour",
                        "beginRange": "0",
                        "endRange": "Inf",
                        "unit": unit,
                        "pricePerUnit": {"USD": fmt(price)},
                        "appliesTo": [],
                    }
                },
                "termAttributes": {},
            }
        }

    def reserved(self, s, length, cls, option, hourly=None, upfront=None):
        codes = {
            ("1yr", "standard", "No Upfront"): "4NA7Y494T4",
            ("1yr", "standard", "Partial Upfront"): "HU7G6KETJZ",
            ("1yr", "standard", "All Upfront"): "6QCMYABX3D",
            ("3yr", "standard", "No Upfront"): "BPH4J8HBKS",
            ("3yr", "standard", "Partial Upfront"): "38NPMPTW36",
            ("3yr", "standard", "All Upfront"): "NQ3QZPMQV9",
            ("1yr", "convertible", "No Upfront"): "7NE97W5U4E",
            ("3yr", "convertible", "No Upfront"): "Z2E3P23VKM",
        }
        tc = codes[(length, cls, option)]
        code = f"{s}.{tc}"
        itype = self.products[s]["attributes"]["instanceType"]
        dims = {}
        if upfront is not None:
            dims[f"{code}.2TG2D8R56U"] = {
                "rateCode": f"{code}.2TG2D8R56U",
                "description": "Upfront Fee",
                "unit": "Quantity",
                "pricePerUnit": {"USD": f"{upfront}"},
                "appliesTo": [],
            }
        dims[f"{code}.6YS6EN2CT7"] = {
            "rateCode": f"{code}.6YS6EN2CT7",
            "description": f"Linux/UNIX (Amazon VPC), {itype} reserved instance applied",
            "beginRange": "0",
            "endRange": "Inf",
            "unit": "Hrs",
            "pricePerUnit": {"USD": fmt(hourly if hourly is not None else 0)},
            "appliesTo": [],
        }
        self.ri.setdefault(s, {})[code] = {
            "offerTermCode": tc,
            "sku": s,
            "effectiveDate": "2026-11-01T00:00:00Z",
            "priceDimensions": dims,
            "termAttributes": {
                "LeaseContractLength": length,
                "OfferingClass": cls,
                "PurchaseOption": option,
            },
        }

    def dump(self, name, version="20261129203312"):
        doc = {
            "formatVersion": "v1.0",
            "disclaimer": "This pricing list is for informational purposes only. All prices are subject to the additional terms included in the pricing pages on http://aws.amazon.com. All Free Tier prices are also subject to the terms included at https://aws.amazon.com/free/",
            "offerCode": "AmazonEC2",
            "version": version,
            "publicationDate": "2026-11-29T20:33:12Z",
            "products": self.products,
            "terms": {"OnDemand": self.od, "Reserved": self.ri},
        }
        txt = json.dumps(doc, indent=2, separators=(",", " : "))
        Path(OUT, name).write_text(txt + "\n")
        return txt


def add_gpu(off, itype, gpu=None, od=None):
    t = types.get(itype)
    s = off.compute(
        itype,
        t["vcpus"] if t else NEW[itype][0],
        t["ram_gib"] if t else NEW[itype][1],
        gpu if gpu is not None else (t["gpu_count"] if t else NEW[itype][2]),
    )
    price = od if od is not None else prices[(itype, off.region, "on_demand")]
    off.ondemand(s, price)
    return s, Decimal(str(price))


NEW = {"p6-b200.48xlarge": (192, 2048, 8), "g4ad.xlarge": (4, 16, 1), "g5g.xlarge": (4, 8, 1)}


def q(d, places="0.0000000001"):
    return Decimal(d).quantize(Decimal(places), rounding=ROUND_HALF_UP)


# ---------------- us-east-1
e = Offer("us-east-1")
for it in [
    "g4dn.xlarge",
    "g4dn.2xlarge",
    "g4dn.12xlarge",
    "g4dn.metal",
    "g5.xlarge",
    "g5.48xlarge",
    "g6.xlarge",
    "g6e.xlarge",
    "gr6.4xlarge",
    "p3.2xlarge",
    "p3dn.24xlarge",
    "p4de.24xlarge",
    "p5.48xlarge",
    "p5en.48xlarge",
]:
    s, p = add_gpu(e, it)
    if it == "g4dn.xlarge":
        e.reserved(s, "1yr", "standard", "No Upfront", hourly=Decimal("0.331"))
        e.reserved(s, "1yr", "standard", "Partial Upfront", hourly=Decimal("0.158"), upfront="1383")
        e.reserved(s, "1yr", "standard", "All Upfront", upfront="2711")
        e.reserved(s, "3yr", "standard", "No Upfront", hourly=Decimal("0.227"))
        e.reserved(s, "3yr", "standard", "All Upfront", upfront="5567")
        e.reserved(s, "1yr", "convertible", "No Upfront", hourly=Decimal("0.379"))
        e.reserved(s, "3yr", "convertible", "No Upfront", hourly=Decimal("0.273"))
    if it == "g5.xlarge":
        e.reserved(s, "1yr", "standard", "No Upfront", hourly=Decimal("0.634"))
        e.reserved(s, "3yr", "standard", "No Upfront", hourly=Decimal("0.435"))
    if it == "p5.48xlarge":
        e.reserved(s, "1yr", "standard", "No Upfront", hourly=Decimal("61.94"))
        e.reserved(
            s, "3yr", "convertible", "No Upfront", hourly=Decimal("50.12")
        )  # convertible only for 3yr -> no reserved_3y
# p4d: 1yr NU and 3yr only All Upfront
s, _ = add_gpu(e, "p4d.24xlarge")
e.reserved(s, "1yr", "standard", "No Upfront", hourly=Decimal("20.6467"))
e.reserved(s, "3yr", "standard", "All Upfront", upfront="298069")
e.reserved(s, "3yr", "standard", "Partial Upfront", hourly=Decimal("5.672"), upfront="149034")
# new type
add_gpu(e, "p6-b200.48xlarge", od=Decimal("113.9328"))
# traps
t = types["g4dn.xlarge"]
s = e.compute("g4dn.xlarge", 4, 16, 1, os_="Windows")
e.ondemand(s, Decimal("0.71"), desc="$0.710 per On Demand Windows g4dn.xlarge Instance Hour")
e.reserved(s, "1yr", "standard", "No Upfront", hourly=Decimal("0.515"))
s = e.compute("g4dn.xlarge", 4, 16, 1, os_="RHEL")
e.ondemand(s, Decimal("0.5548"), desc="$0.555 per On Demand RHEL g4dn.xlarge Instance Hour")
s = e.compute("g4dn.xlarge", 4, 16, 1, sw="SQL Web")
e.ondemand(
    s, Decimal("0.574"), desc="$0.574 per On Demand Linux with SQL Web g4dn.xlarge Instance Hour"
)
s = e.compute("g4dn.xlarge", 4, 16, 1, tenancy="Dedicated")
e.ondemand(s, Decimal("0.5786"), desc="$0.579 per Dedicated Linux g4dn.xlarge Instance Hour")
s = e.compute("g4dn.xlarge", 4, 16, 1, cap="AllocatedCapacityReservation")
e.ondemand(s, Decimal("0.526"), desc="$0.526 per Reservation Linux g4dn.xlarge Instance Hour")
s = e.compute("g4dn.xlarge", 4, 16, 1, cap="UnusedCapacityReservation")
e.ondemand(
    s, Decimal("0.526"), desc="$0.526 per Unused Reservation Linux g4dn.xlarge Instance Hour"
)
s = e.compute("g4dn.xlarge", 4, 16, 1, os_="Windows", lic="Bring your own license")
e.ondemand(s, Decimal("0.526"), desc="$0.526 per On Demand Windows BYOL g4dn.xlarge Instance Hour")
s = e.compute("g4ad.xlarge", 4, 16, 1)
e.ondemand(s, Decimal("0.37853"))
s = e.compute("g5g.xlarge", 4, 8, 1)
e.ondemand(s, Decimal("0.42"))
s = e.compute("m5.large", 2, 8, None, family_label="General purpose")
e.ondemand(s, Decimal("0.096"))
s = e.other(
    "Storage",
    {
        "storageMedia": "SSD-backed",
        "volumeType": "General Purpose",
        "maxVolumeSize": "16 TiB",
        "usagetype": "EBS:VolumeUsage.gp3",
        "operation": "",
        "volumeApiName": "gp3",
    },
)
e.ondemand(
    s,
    Decimal("0.08"),
    unit="GB-Mo",
    desc="$0.08 per GB-month of General Purpose (gp3) provisioned storage - US East (N. Virginia)",
)
s = e.other(
    "Data Transfer",
    {
        "transferType": "IntraRegion",
        "fromLocation": "US East (N. Virginia)",
        "toLocation": "US East (N. Virginia)",
        "usagetype": "DataTransfer-Regional-Bytes",
        "operation": "",
    },
)
e.ondemand(
    s,
    Decimal("0.01"),
    unit="GB",
    desc="$0.010 per GB - regional data transfer - in/out/between EC2 AZs or using elastic IPs or ELB",
)
s = e.other(
    "Dedicated Host",
    {
        "instanceType": "p4d",
        "instanceFamily": "GPU instance",
        "vcpu": "96",
        "physicalCores": "48",
        "tenancy": "Host",
        "usagetype": "HostUsage:p4d",
        "operation": "RunInstances",
        "capacitystatus": "Used",
        "preInstalledSw": "NA",
        "licenseModel": "No License required",
    },
)
e.ondemand(s, Decimal("36.0499"), desc="$36.050 per On Demand Linux p4d Dedicated Host Hour")
e.dump("us-east-1.json")

# ---------------- us-west-2
w = Offer("us-west-2")
for it in ["g5.xlarge", "p4de.24xlarge", "g6e.48xlarge"]:
    s, p = add_gpu(w, it)
s = w.compute("g5.xlarge", 4, 16, 1, os_="Windows")
w.ondemand(s, Decimal("1.19"))
w.dump("us-west-2.json")

# ---------------- eu-north-1 (trimmed to non-GPU products)
n = Offer("eu-north-1")
s = n.compute("m5.large", 2, 8, None, family_label="General purpose")
n.ondemand(s, Decimal("0.102"))
s = n.other(
    "Storage",
    {
        "storageMedia": "SSD-backed",
        "volumeType": "General Purpose",
        "usagetype": "EUN1-EBS:VolumeUsage.gp3",
        "operation": "",
        "volumeApiName": "gp3",
    },
)
n.ondemand(
    s,
    Decimal("0.0836"),
    unit="GB-Mo",
    desc="$0.0836 per GB-month of General Purpose (gp3) provisioned storage - EU (Stockholm)",
)
n.dump("eu-north-1.json")


# ---------------- spot feed
def size(it, linux, mswin="N/A*"):
    return {
        "size": it,
        "valueColumns": [
            {"name": "linux", "prices": {"USD": linux}},
            {"name": "mswin", "prices": {"USD": mswin}},
        ],
    }


def sp(it, r):
    return f"{prices[(it, r, 'spot')]}"


feed = {
    "vers": 0.01,
    "config": {
        "rate": "perhr",
        "valueColumns": ["linux", "mswin"],
        "currencies": ["USD"],
        "regions": [
            {
                "region": "us-east",
                "footnotes": {"*": "notAvailableForCCorCGPU"},
                "instanceTypes": [
                    {"type": "generalCurrentGen", "sizes": [size("m5.large", "0.0392", "0.1312")]},
                    {
                        "type": "gpuCurrentGen",
                        "sizes": [
                            size("g4dn.xlarge", sp("g4dn.xlarge", "us-east-1"), "0.3692"),
                            size("g4dn.12xlarge", sp("g4dn.12xlarge", "us-east-1")),
                            size("g5.xlarge", sp("g5.xlarge", "us-east-1")),
                            size("p4d.24xlarge", sp("p4d.24xlarge", "us-east-1")),
                            size("p5.48xlarge", "N/A*"),
                            size("g4ad.xlarge", "0.1136"),
                        ],
                    },
                ],
            },
            {
                "region": "us-west-2",
                "footnotes": {"*": "notAvailableForCCorCGPU"},
                "instanceTypes": [
                    {
                        "type": "gpuCurrentGen",
                        "sizes": [
                            size("g5.xlarge", sp("g5.xlarge", "us-west-2")),
                            size("p4de.24xlarge", sp("p4de.24xlarge", "us-west-2")),
                        ],
                    }
                ],
            },
            {
                "region": "apac-tokyo",
                "footnotes": {"*": "notAvailableForCCorCGPU"},
                "instanceTypes": [
                    {
                        "type": "gpuCurrentGen",
                        "sizes": [size("g4dn.xlarge", sp("g4dn.xlarge", "ap-northeast-1"))],
                    }
                ],
            },
        ],
    },
}
Path(OUT, "spot.js").write_text("callback(" + json.dumps(feed) + ");\n")
