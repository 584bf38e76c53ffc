"""Model presets: fixtures/models.yaml read into `ModelArch` records, once per path."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

from .specs import MODEL_KINDS, ModelArch

DEFAULT_PATH = Path(__file__).resolve().parent.parent / "fixtures" / "models.yaml"

# Keys of a models.yaml record that are for the reader, not the estimator.
_READER_ONLY = {"slug", "active_params_b"}


def load_presets(path: str | Path = DEFAULT_PATH) -> dict[str, ModelArch]:
    """Return {slug: ModelArch} for every record in `path` (cached; the file is read once)."""
    return dict(_load(str(Path(path).resolve())))


@lru_cache(maxsize=4)
def _load(path: str) -> tuple[tuple[str, ModelArch], ...]:
    with open(path, encoding="utf-8") as fh:
        records = yaml.safe_load(fh) or []
    fields = set(ModelArch.__dataclass_fields__)
    out: list[tuple[str, ModelArch]] = []
    seen: set[str] = set()
    for rec in records:
        slug = rec["slug"]
        if slug in seen:
            raise ValueError(f"{path}: duplicate preset {slug!r}")
        seen.add(slug)
        unknown = set(rec) - fields - _READER_ONLY
        if unknown:
            raise ValueError(f"{path}: preset {slug!r} has unknown keys {sorted(unknown)}")
        if rec.get("kind") not in MODEL_KINDS:
            raise ValueError(f"{path}: preset {slug!r} has kind {rec.get('kind')!r}")
        kwargs = {k: v for k, v in rec.items() if k in fields}
        kwargs["display_name"] = rec.get("name") or slug
        kwargs["name"] = slug
        kwargs.setdefault("family", slug.split("-")[0])
        out.append((slug, ModelArch(**kwargs)))
    return tuple(out)
