"""YAML configs with a base file and ``key=value`` overrides."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from rcrn.cli import CommandError

__all__ = ["load_config", "apply_overrides", "save_config", "merge", "read_yaml", "ConfigError"]


class ConfigError(CommandError, ValueError):
    """A config file or override that cannot be used; the message names it.

    The CLI reports it without a traceback.
    """


def merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``base`` with ``top`` merged in (sections recursively, other values replaced)."""
    out = copy.deepcopy(base)
    for k, v in top.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def read_yaml(path: str | Path, what: str = "config") -> dict[str, Any]:
    """The mapping of a YAML file (empty for an empty file).

    Raises:
        ConfigError: naming the file when it is missing, not YAML or not a mapping.
    """
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{what} {path} does not exist")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc})") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: {'an' if what[0] in 'aeiou' else 'a'} {what} is a "
                          "mapping at the top level")
    return data


def load_config(path: str | Path, overrides: list[str] | None = None) -> dict[str, Any]:
    """Read a YAML config, merged over its ``_base_`` file (relative path), then overrides."""
    path = Path(path)
    data = read_yaml(path, "config file")
    base = data.pop("_base_", None)
    if base:
        data = merge(load_config(path.parent / base), data)
    return apply_overrides(data, overrides or [])


def apply_overrides(config: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``a.b.c=value`` overrides (values parsed as YAML scalars)."""
    config = copy.deepcopy(config)
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"override {item!r} is not key=value")
        key, raw = item.split("=", 1)
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError as exc:
            raise ConfigError(f"override {item!r}: value is not valid YAML") from exc
        node = config
        parts = key.strip().split(".")
        for p in parts[:-1]:
            if not isinstance(node.setdefault(p, {}), dict):
                raise ConfigError(f"override {item!r}: {p!r} is not a section")
            node = node[p]
        node[parts[-1]] = value
    return config


def save_config(config: dict[str, Any], path: str | Path) -> None:
    Path(path).write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
