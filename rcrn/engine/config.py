"""YAML configs with a base file and ``key=value`` overrides, checked by the schema of
:mod:`rcrn.engine.schema`."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from rcrn.errors import CommandError

__all__ = ["load_config", "apply_overrides", "check_config", "save_config", "merge", "read_yaml",
           "parse_yaml", "ConfigError"]


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


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """A YAML error on one line: what is wrong and where (line and column, from 1)."""
    if isinstance(exc, yaml.reader.ReaderError):
        char = exc.character if isinstance(exc.character, int) else ord(exc.character[:1] or " ")
        return (f"character #x{char:04x} at position {exc.position} is not allowed in YAML "
                "(a binary file?)")
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    what = getattr(exc, "problem", None) or getattr(exc, "context", None) or "cannot be parsed"
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return " ".join(f"{where}{what}".split())


def parse_yaml(text: str, where: str) -> Any:
    """The value of a YAML text; ``where`` (a file, an override) names it in errors.

    Raises:
        ConfigError: one line naming ``where`` and the position of the problem.
    """
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: not valid YAML ({_yaml_problem(exc)})") from None
    except RecursionError:
        raise ConfigError(f"{where}: nested too deeply to read") from None


def read_yaml(path: str | Path, what: str = "config") -> dict[str, Any]:
    """The mapping of a YAML file (empty for an empty file).

    Raises:
        ConfigError: naming the file when it is missing, unreadable, not UTF-8 text,
            not YAML or not a mapping.
    """
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{what} {path} does not exist")
    if path.is_dir():
        raise ConfigError(f"{what} {path} is a folder, not a YAML file")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{what} {path} cannot be read ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a UTF-8 text file (byte 0x{raw[exc.start]:02x} at "
                          f"offset {exc.start}); {what}s are YAML text") from None
    data = parse_yaml(text, str(path))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: {'an' if what[0] in 'aeiou' else 'a'} {what} is a "
                          "mapping at the top level")
    return data


def load_config(path: str | Path, overrides: list[str] | None = None,
                _seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """Read a YAML config, merged over its ``_base_`` file (relative path), then overrides.

    The result is not checked against the schema; commands do that with
    :func:`check_config` once the config is complete.
    """
    path = Path(path)
    data = read_yaml(path, "config file")
    base = data.pop("_base_", None)
    if base is not None:
        if not isinstance(base, str) or not base.strip():
            raise ConfigError(f"{path}: _base_ must be the path of a config file (relative "
                              f"to this one), got {base!r}")
        base_path = path.parent / base
        here = path.resolve()
        if base_path.resolve() in (*_seen, here):
            raise ConfigError(f"{path}: _base_ {base!r} leads back to a config that "
                              f"includes it (a cycle of _base_ files)")
        data = merge(load_config(base_path, _seen=(*_seen, here)), data)
    return apply_overrides(data, overrides or [])


def apply_overrides(config: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``a.b.c=value`` overrides (values parsed as YAML scalars)."""
    config = copy.deepcopy(config)
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"override {item!r} is not key=value")
        key, raw = item.split("=", 1)
        parts = key.strip().split(".")
        if not all(p.strip() for p in parts):
            raise ConfigError(f"override {item!r}: the key has an empty part (write "
                              "section.key=value, e.g. train.steps=100)")
        value = parse_yaml(raw, f"override {item!r}: the value")
        node = config
        for p in parts[:-1]:
            if not isinstance(node.setdefault(p, {}), dict):
                raise ConfigError(f"override {item!r}: {p!r} is not a section")
            node = node[p]
        node[parts[-1]] = value
    return config


def check_config(config: dict[str, Any]) -> dict[str, Any]:
    """Check a resolved config against the schema (:mod:`rcrn.engine.schema`); returns it.

    Raises:
        ConfigError: one line naming the first key that cannot be used, its value and
            what is allowed.
    """
    from rcrn.engine.schema import check_config as check

    return check(config)


def save_config(config: dict[str, Any], path: str | Path) -> None:
    Path(path).write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
